package dev.sluice.cli;

import dev.sluice.LockHandle;
import dev.sluice.LockInfo;
import dev.sluice.server.json.OpsDocuments;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "lock", description = "TTL locks: take one for a TTL; list them with owner, fencing token and expiry.",
        subcommands = {LockCommand.Acquire.class, LockCommand.ListLocks.class})
final class LockCommand {

    @Command(name = "acquire", description = {"Take a lock for --ttl if it is free and print its fencing token.",
            "The lock is not released when the command ends: it lapses at its expiry. Exits 1 when someone holds it."})
    static final class Acquire extends Base {
        @Parameters(paramLabel = "NAME", description = "Lock name.")
        String name;

        @Option(names = "--ttl", paramLabel = "DURATION", defaultValue = "30s",
                description = "How long the lock is held (default: ${DEFAULT-VALUE}; at most 30 days).")
        String ttl;

        @Override
        public Integer call() {
            try (CliContext ctx = open()) {
                Optional<LockHandle> taken = ctx.sluice().lock(name).tryAcquire(Durations.parse(ttl));
                if (taken.isEmpty()) {
                    spec.commandLine().getErr().println("lock '" + name + "' is held by someone else");
                    return Main.FAILURE;
                }
                LockHandle h = taken.get();
                if (json()) {
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("name", h.name());
                    m.put("owner", h.owner());
                    m.put("fencing_token", h.fencingToken());
                    m.put("expires_at", h.expiresAt().toString());
                    Output.json(out(), m);
                } else {
                    out().println(h.fencingToken());
                }
            }
            return Main.OK;
        }
    }

    @Command(name = "list", description = {"Every lock of the schema, held or not.",
            "HELD is by the database clock: acquired, not released, not past EXPIRES_AT."})
    static final class ListLocks extends Base {
        @Override
        public Integer call() {
            try (CliContext ctx = open()) {
                List<LockInfo> locks = ctx.sluice().locks();
                if (json()) {
                    Output.json(out(), locks.stream().map(OpsDocuments::lock).toList());
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
