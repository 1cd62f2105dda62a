package dev.sluice.cli;

import dev.sluice.LockInfo;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;

@Command(name = "lock", description = "TTL locks: list them with owner, fencing token and expiry.",
        subcommands = {LockCommand.ListLocks.class})
final class LockCommand {

    static Map<String, Object> lock(LockInfo l) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", l.name());
        m.put("owner", l.owner());
        m.put("held", l.held());
        m.put("fencing_token", l.fencingToken());
        m.put("acquired_at", l.acquiredAt().toString());
        m.put("expires_at", l.expiresAt().toString());
        m.put("updated_at", l.updatedAt().toString());
        return m;
    }

    @Command(name = "list", description = {"Every lock of the schema, held or not.",
            "HELD is by the database clock: acquired, not released, not past EXPIRES_AT."})
    static final class ListLocks extends Base {
        @Override
        public Integer call() {
            try (CliContext ctx = open()) {
                List<LockInfo> locks = ctx.sluice().locks();
                if (json()) {
                    Output.json(out(), locks.stream().map(LockCommand::lock).toList());
                } else if (locks.isEmpty()) {
                    out().println("no locks in schema '" + globals().schema + "'");
                } else {
                    List<List<String>> rows = new ArrayList<>();
                    for (LockInfo l : locks) {
                        rows.add(List.of(l.name(), l.held() ? "yes" : "no", l.owner() == null ? "-" : l.owner(),
                                Long.toString(l.fencingToken()), l.acquiredAt().toString(), l.expiresAt().toString()));
                    }
                    Output.table(out(), List.of("NAME", "HELD", "OWNER", "FENCING_TOKEN", "ACQUIRED_AT", "EXPIRES_AT"), rows);
                }
            }
            return Main.OK;
        }
    }
}
