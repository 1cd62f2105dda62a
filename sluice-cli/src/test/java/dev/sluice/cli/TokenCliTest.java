package dev.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.Sluice;
import dev.sluice.TokenInfo;
import dev.sluice.TokenRole;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** {@code sluice token create / list / revoke}: the secret printed once, never listed; coded errors. */
@SluiceTest
class TokenCliTest {
    static final String SECRET_FORM = "slu_[A-Za-z0-9_-]{43}";

    static Sluice client(TestDatabase db, String schema) {
        return Sluice.builder().jdbcUrl(db.jdbcUrl()).schema(schema).clientId("cli-tokens").maintenance(false).build();
    }

    static Optional<TokenInfo> authenticate(TestDatabase db, String schema, String secret) {
        try (Sluice sluice = client(db, schema)) {
            return sluice.tokens().authenticate(secret);
        }
    }

    static void expectCode(CliTest.Run run, String code) {
        assertThat(run.exit()).as(run.out() + run.err()).isEqualTo(Main.FAILURE);
        assertThat(run.err()).as(run.err()).contains("[" + code + "]").doesNotContain("\tat ");
    }

    @Test
    void createPrintsTheSecretOnceListNeverShowsItRevokeEndsIt(TestDatabase db) {
        String schema = db.freshSchemaName("cli_tokens");
        CliTest.Run created = CliTest.run(db, schema, "token", "create", "--role", "write", "--name", "deploy");
        assertThat(created.exit()).as(created.err()).isZero();
        String secret = created.out().trim();
        assertThat(secret).as("the secret alone on stdout").matches(SECRET_FORM);
        assertThat(created.err()).contains("deploy").contains("role write").contains("Store the secret").contains("only this once")
                .doesNotContain(secret);
        assertThat(authenticate(db, schema, secret)).map(TokenInfo::role).contains(TokenRole.WRITE);

        CliTest.Run json = CliTest.run(db, schema, "token", "create", "--role", "ADMIN", "-o", "json");
        assertThat(json.exit()).as(json.err()).isZero();
        JsonNode j = json.json();
        assertThat(j.properties()).extracting(java.util.Map.Entry::getKey).containsExactly("id", "name", "role", "secret");
        long adminId = j.get("id").asLong();
        assertThat(j.get("name").asText()).isEqualTo("token-" + adminId);
        assertThat(j.get("role").asText()).isEqualTo("admin");
        String adminSecret = j.get("secret").asText();
        assertThat(adminSecret).matches(SECRET_FORM).isNotEqualTo(secret);
        assertThat(authenticate(db, schema, adminSecret)).map(TokenInfo::id).contains(adminId);

        CliTest.Run list = CliTest.run(db, schema, "token", "list");
        assertThat(list.exit()).as(list.err()).isZero();
        assertThat(list.out()).contains("ID", "NAME", "ROLE", "STATE", "CREATED", "REVOKED")
                .contains("deploy").contains("token-" + adminId).contains("active")
                .doesNotContain(secret.substring(4)).doesNotContain(adminSecret.substring(4));
        assertThat(list.out().lines().skip(1).findFirst().orElseThrow()).as("newest first").startsWith(Long.toString(adminId));

        CliTest.Run revoked = CliTest.run(db, schema, "token", "revoke", "deploy");
        assertThat(revoked.exit()).as(revoked.err()).isZero();
        assertThat(revoked.out()).contains("revoked token").contains("deploy");
        assertThat(authenticate(db, schema, secret)).isEmpty();
        assertThat(authenticate(db, schema, adminSecret)).isPresent();

        CliTest.Run listed = CliTest.run(db, schema, "token", "list", "-o", "json");
        assertThat(listed.exit()).isZero();
        JsonNode items = listed.json();
        assertThat(items).hasSize(2);
        assertThat(items.get(0).get("id").asLong()).isEqualTo(adminId);
        assertThat(items.get(0).get("active").asBoolean()).isTrue();
        assertThat(items.get(0).get("revoked_at").isNull()).isTrue();
        assertThat(items.get(1).get("name").asText()).isEqualTo("deploy");
        assertThat(items.get(1).get("active").asBoolean()).isFalse();
        assertThat(items.get(1).get("revoked_at").asText()).isNotBlank();
        items.forEach(i -> assertThat(i.has("secret")).isFalse());
        assertThat(listed.out()).doesNotContain(secret.substring(4)).doesNotContain(adminSecret.substring(4));

        CliTest.Run byId = CliTest.run(db, schema, "token", "revoke", Long.toString(adminId), "-o", "json");
        assertThat(byId.exit()).as(byId.err()).isZero();
        assertThat(byId.json().get("active").asBoolean()).isFalse();
        assertThat(authenticate(db, schema, adminSecret)).isEmpty();
    }

    @Test
    void badInputIsCodedAndNothingIsCreated(TestDatabase db) {
        String schema = db.freshSchemaName("cli_tokens_bad");
        expectCode(CliTest.run(db, schema, "token", "create", "--role", "root"), "SLU-0015");
        expectCode(CliTest.run(db, schema, "token", "create", "--role", "read", "--name", "Bad Name"), "SLU-0001");
        expectCode(CliTest.run(db, schema, "token", "create", "--role", "read", "--name", "42"), "SLU-0001");
        CliTest.Run escape = CliTest.run(db, schema, "token", "create", "--role", "read", "--name", "x\u001b]0;owned\u0007");
        expectCode(escape, "SLU-0001");
        assertThat(escape.err()).doesNotContain("\u001b").doesNotContain("\u0007");
        assertThat(CliTest.run(db, schema, "token", "create", "--role", "read").exit()).isZero();

        assertThat(CliTest.run(db, schema, "token", "create", "--role", "read", "--name", "ci").exit()).isZero();
        expectCode(CliTest.run(db, schema, "token", "create", "--role", "write", "--name", "ci"), "SLU-0609");
        expectCode(CliTest.run(db, schema, "token", "revoke", "nope"), "SLU-0607");
        expectCode(CliTest.run(db, schema, "token", "revoke", "999999"), "SLU-0607");
        CliTest.Run json = CliTest.run(db, schema, "token", "revoke", "nope", "-o", "json");
        assertThat(json.exit()).isEqualTo(Main.FAILURE);
        assertThat(json.out()).contains("SLU-0607");

        CliTest.Run missingRole = CliTest.run(db, schema, "token", "create");
        assertThat(missingRole.exit()).isEqualTo(Main.USAGE);
        assertThat(missingRole.err()).contains("--role");
        assertThat(CliTest.run(db, schema, "token", "list", "-o", "json").json()).hasSize(2);
    }
}
