package dev.sluice.cli;

import dev.sluice.NewToken;
import dev.sluice.TokenInfo;
import dev.sluice.TokenRole;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code sluice token}: API tokens (create, list, revoke); a secret is printed once, by create, and never again. */
@Command(name = "token", description = {"API tokens for the HTTP server: create one (its secret is shown once), list, revoke.",
        "Sluice keeps only the SHA-256 hash of a secret; a lost secret cannot be shown again: create another."},
        subcommands = {TokenCommand.Create.class, TokenCommand.ListTokens.class, TokenCommand.Revoke.class})
final class TokenCommand {

    /** A token as listed: never its secret. */
    static Map<String, Object> token(TokenInfo t) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", t.id());
        m.put("name", t.name());
        m.put("role", t.role().text());
        m.put("active", t.active());
        m.put("created_at", t.createdAt().toString());
        m.put("revoked_at", t.revokedAt() == null ? null : t.revokedAt().toString());
        return m;
    }

    @Command(name = "create", description = {"Create an API token and print its secret, once.",
            "Text output: the secret alone on standard output (for TOKEN=$(sluice token create ...)), and on standard"
                    + " error which token it is and that it must be stored now.",
            "-o json prints {\"id\", \"name\", \"role\", \"secret\"}."})
    static final class Create extends Base {
        @Option(names = "--role", required = true, paramLabel = "ROLE",
                description = "What the token may do: read, write or admin (read < write < admin).")
        String role;

        @Option(names = "--name", paramLabel = "NAME",
                description = "A name, unique among active tokens (default: token-<id>); not only digits.")
        String name;

        @Override
        public Integer call() {
            TokenRole r = TokenRole.parse(role);
            try (CliContext ctx = open()) {
                NewToken t = ctx.sluice().tokens().create(r, name);
                if (json()) {
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("id", t.info().id());
                    m.put("name", t.info().name());
                    m.put("role", t.info().role().text());
                    m.put("secret", t.secret());
                    Output.json(out(), m);
                } else {
                    out().println(t.secret());
                    spec.commandLine().getErr().println("created token " + t.info().id() + " '" + t.info().name() + "' (role "
                            + t.info().role().text() + "). Store the secret above now: it is shown only this once and cannot"
                            + " be recovered (revoke it with 'sluice token revoke " + t.info().id() + "').");
                }
            }
            return Main.OK;
        }
    }

    @Command(name = "list", description = {"Every API token, newest first, revoked ones included; never a secret.",
            "-o json prints a list of {id, name, role, active, created_at, revoked_at}."})
    static final class ListTokens extends Base {
        @Override
        public Integer call() {
            try (CliContext ctx = open()) {
                List<TokenInfo> tokens = ctx.sluice().tokens().list();
                if (json()) {
                    Output.json(out(), tokens.stream().map(TokenCommand::token).toList());
                } else if (tokens.isEmpty()) {
                    out().println("no API tokens in schema '" + globals().schema + "'");
                } else {
                    List<List<String>> rows = new ArrayList<>();
                    for (TokenInfo t : tokens) {
                        rows.add(List.of(Long.toString(t.id()), t.name(), t.role().text(), t.active() ? "active" : "revoked",
                                t.createdAt().toString(), t.revokedAt() == null ? "-" : t.revokedAt().toString()));
                    }
                    Output.table(out(), List.of("ID", "NAME", "ROLE", "STATE", "CREATED", "REVOKED"), rows);
                }
            }
            return Main.OK;
        }
    }

    @Command(name = "revoke", description = {"Revoke an active API token by id or name: its secret stops working at once.",
            "The token stays listed (revoked); its name is free again. Exits 1 (SLU-0607) when no active token matches."})
    static final class Revoke extends Base {
        @Parameters(paramLabel = "ID|NAME", description = "The token's id (digits only) or its name.")
        String idOrName;

        @Override
        public Integer call() {
            try (CliContext ctx = open()) {
                TokenInfo t = ctx.sluice().tokens().revoke(idOrName);
                if (json()) {
                    Output.json(out(), token(t));
                } else {
                    out().println("revoked token " + t.id() + " '" + t.name() + "' (role " + t.role().text() + ")");
                }
            }
            return Main.OK;
        }
    }
}
