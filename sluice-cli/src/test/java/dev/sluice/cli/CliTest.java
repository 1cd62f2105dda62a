package dev.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.ErrorCode;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@SluiceTest
class CliTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    record Run(int exit, String out, String err) {
        JsonNode json() {
            try {
                return JSON.readTree(out);
            } catch (Exception e) {
                throw new AssertionError("not JSON: " + out, e);
            }
        }
    }

    static Run raw(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = Main.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new Run(exit, out.toString(), err.toString());
    }

    /** Runs against the test database in a schema of its own. */
    static Run run(TestDatabase db, String schema, String... args) {
        List<String> all = new ArrayList<>(List.of(args));
        all.add("--database-url");
        all.add(db.jdbcUrl());
        all.add("--schema");
        all.add(schema);
        return raw(all.toArray(String[]::new));
    }

    @Test
    void systemRegisterAndGet(TestDatabase db) {
        String schema = db.freshSchemaName("cli_system");
        Run missing = run(db, schema, "system", "get");
        assertThat(missing.exit()).isEqualTo(Main.FAILURE);
        assertThat(missing.err()).contains("SLU-0105");

        Run registered = run(db, schema, "system", "register", "-o", "json");
        assertThat(registered.exit()).isZero();
        assertThat(registered.json().get("schema").asText()).isEqualTo(schema);
        assertThat(registered.json().get("version").asInt()).as("control plane V006 (api tokens)").isEqualTo(6);
        assertThat(run(db, schema, "system", "register").exit()).isZero();
        Run got = run(db, schema, "system", "get");
        assertThat(got.exit()).isZero();
        assertThat(got.out()).contains("schema:").contains(schema);
    }

    @Test
    void streamRegisterListGetRenameDestroy(TestDatabase db) {
        String schema = db.freshSchemaName("cli_stream");
        Run reg = run(db, schema, "stream", "register", "demo.orders", "--partition-size", "500", "--retention", "7d",
                "--delivery-log", "all", "-o", "json");
        assertThat(reg.exit()).as(reg.err()).isZero();
        long id = reg.json().get("id").asLong();
        assertThat(reg.json().at("/config/retention").asText()).isEqualTo("PT168H");
        assertThat(reg.json().at("/config/partition_size").asLong()).isEqualTo(500);

        Run list = run(db, schema, "stream", "list");
        assertThat(list.exit()).isZero();
        assertThat(list.out()).contains("NAME").contains("demo.orders").contains("7d");
        assertThat(run(db, schema, "stream", "list", "-o", "json").json()).hasSize(1);

        Run immutable = run(db, schema, "stream", "register", "demo.orders", "--partition-size", "600");
        assertThat(immutable.exit()).isEqualTo(Main.FAILURE);
        assertThat(immutable.err()).contains("SLU-0102");

        Run renamed = run(db, schema, "stream", "rename", "demo.orders", "demo.purchases", "-o", "json");
        assertThat(renamed.exit()).isZero();
        assertThat(renamed.json().get("id").asLong()).isEqualTo(id);
        assertThat(run(db, schema, "stream", "get", "demo.orders").exit()).isEqualTo(Main.FAILURE);
        assertThat(run(db, schema, "stream", "get", "demo.purchases").out()).contains("message_log_" + id);

        Run noYes = run(db, schema, "stream", "destroy", "demo.purchases");
        assertThat(noYes.exit()).isEqualTo(Main.USAGE);
        assertThat(noYes.err()).contains("--yes");
        db.execute("INSERT INTO \"" + schema + "\".message_log_" + id + " (payload) VALUES ('\\x00')");
        Run notEmpty = run(db, schema, "stream", "destroy", "demo.purchases", "--yes", "-o", "json");
        assertThat(notEmpty.exit()).isEqualTo(Main.FAILURE);
        assertThat(notEmpty.json().at("/error/code").asText()).isEqualTo("SLU-0104");
        assertThat(notEmpty.json().at("/error/retryable").asBoolean()).isFalse();
        Run destroyed = run(db, schema, "stream", "destroy", "demo.purchases", "--force", "--yes");
        assertThat(destroyed.exit()).isZero();
        assertThat(run(db, schema, "stream", "list").out()).contains("no streams");
    }

    @Test
    void badInputIsCodedAndUsageErrorsExitTwo(TestDatabase db) {
        String schema = db.freshSchemaName("cli_bad");
        Run badName = run(db, schema, "stream", "register", "Bad Name");
        assertThat(badName.exit()).isEqualTo(Main.FAILURE);
        assertThat(badName.err()).contains("SLU-0001");
        Run badDuration = run(db, schema, "stream", "register", "ok", "--retention", "a while");
        assertThat(badDuration.exit()).isEqualTo(Main.FAILURE);
        assertThat(badDuration.err()).contains("SLU-0015");
        Run badSize = run(db, schema, "stream", "register", "ok", "--partition-size", "0");
        assertThat(badSize.err()).contains("SLU-0003");
        assertThat(run(db, schema, "stream", "register", "ok", "--partition-size", "many").exit()).isEqualTo(Main.USAGE);
        assertThat(run(db, schema, "stream", "rename", "only-one").exit()).isEqualTo(Main.USAGE);
        assertThat(raw("nonsense").exit()).isEqualTo(Main.USAGE);
        assertThat(raw("--output", "yaml", "stream", "list").exit()).isEqualTo(Main.USAGE);
        Run badSchema = run(db, "Bad-Schema", "stream", "list");
        assertThat(badSchema.exit()).isEqualTo(Main.FAILURE);
        assertThat(badSchema.err()).contains("SLU-0002");
        Run unreachable = raw("stream", "list", "--database-url", "jdbc:postgresql://127.0.0.1:1/none?connectTimeout=2");
        assertThat(unreachable.exit()).isEqualTo(Main.FAILURE);
        assertThat(unreachable.err()).contains("SLU-0300");
    }

    @Test
    void globalOptionsWorkBeforeOrAfterTheSubcommand(TestDatabase db) {
        String schema = db.freshSchemaName("cli_global");
        assertThat(raw("--database-url", db.jdbcUrl(), "--schema", schema, "stream", "register", "early").exit()).isZero();
        Run list = raw("stream", "--schema", schema, "list", "--database-url", db.jdbcUrl(), "--output", "json");
        assertThat(list.exit()).isZero();
        assertThat(list.json().get(0).get("name").asText()).isEqualTo("early");
    }

    @Test
    void migrateStatusUpAndSql(TestDatabase db) {
        String schema = db.freshSchemaName("cli_migrate");
        Run before = run(db, schema, "migrate", "status");
        assertThat(before.exit()).isZero();
        assertThat(before.out()).contains("not_installed");
        Run up = run(db, schema, "migrate", "up", "-o", "json");
        assertThat(up.exit()).isZero();
        assertThat(up.json().get(0).get("state").asText()).isEqualTo("current");
        run(db, schema, "stream", "register", "s");
        assertThat(run(db, schema, "migrate", "status").out()).contains("stream").contains("current");

        db.execute("UPDATE \"" + schema + "\".migration_log SET checksum = 'x' WHERE stream_id IS NOT NULL");
        Run tampered = run(db, schema, "migrate", "status");
        assertThat(tampered.exit()).isEqualTo(Main.FAILURE);
        assertThat(tampered.out()).contains("checksum_mismatch");
        Run refused = run(db, schema, "migrate", "up");
        assertThat(refused.exit()).isEqualTo(Main.FAILURE);
        assertThat(refused.err()).contains("SLU-0202");

        Run sql = raw("migrate", "sql", "--schema", "app", "--stream-id", "7");
        assertThat(sql.exit()).isZero();
        assertThat(sql.out()).contains("CREATE TABLE \"app\".system_config").contains("\"app\".message_log_7")
                .contains("INSERT INTO \"app\".migration_log");
    }

    @Test
    void explainPrintsCatalogueEntriesOffline() {
        Run text = raw("explain", "SLU-0100");
        assertThat(text.exit()).isZero();
        assertThat(text.out()).startsWith("SLU-0100").contains(ErrorCode.STREAM_NOT_FOUND.fix());
        Run json = raw("explain", "202", "-o", "json");
        assertThat(json.json().get("name").asText()).isEqualTo("MIGRATION_CHECKSUM_MISMATCH");
        Run unknown = raw("explain", "SLU-9999");
        assertThat(unknown.exit()).isEqualTo(Main.FAILURE);
        assertThat(unknown.err()).contains("SLU-0401");
        assertThat(raw("--help").exit()).isZero();
        assertThat(raw("--version").out()).startsWith("sluice");
    }

    @Test
    void embeddedDefaultKeepsDataInTheDataDirectoryAcrossRuns(@TempDir Path dir) {
        String dataDir = dir.resolve("data").toString();
        Run reg = raw("stream", "register", "demo.orders", "--data-dir", dataDir);
        assertThat(reg.exit()).as(reg.err()).isZero();
        Run list = raw("stream", "list", "--data-dir", dataDir);
        assertThat(list.exit()).as(list.err()).isZero();
        assertThat(list.out()).contains("demo.orders");
    }
}
