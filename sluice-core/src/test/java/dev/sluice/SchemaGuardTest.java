package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.testing.PgCatalog;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The first install refuses a schema that holds other objects and no Sluice ledger, unless forced. */
@SluiceTest
class SchemaGuardTest {
    private static Sluice client(TestDatabase db, String schema, boolean force) {
        return Sluice.builder().dataSource(db.dataSource()).schema(schema).forceSchema(force).build();
    }

    private static void assertRefused(ThrowingRunnable call) {
        assertThatThrownBy(call::run).isInstanceOfSatisfying(SluiceException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.SCHEMA_NOT_SLUICE);
            assertThat(e.getMessage()).contains("force");
        });
    }

    private interface ThrowingRunnable {
        void run() throws Exception;
    }

    @Test
    void anApplicationSchemaWithATableIsRefusedAndNothingIsCreated(TestDatabase db) {
        String schema = db.freshSchemaName("app");
        db.execute("CREATE SCHEMA " + schema);
        db.execute("CREATE TABLE " + schema + ".accounts (id bigint PRIMARY KEY, name text)");
        try (Sluice sluice = client(db, schema, false)) {
            assertRefused(() -> sluice.stream("orders").register());
            assertRefused(() -> sluice.system().register());
            assertRefused(() -> sluice.queue("emails", String.class).enqueue("hi"));
            assertRefused(() -> sluice.lock("l").tryAcquire(Duration.ofSeconds(1)));
            assertRefused(() -> sluice.schedule("s").register(ScheduleSpec.every(Duration.ofMinutes(1)).toQueue("q").build()));
            assertThatThrownBy(() -> sluice.stream("orders").register()).hasMessageContaining("table accounts");
        }
        assertThat(new PgCatalog(db, schema).tables()).containsExactly("accounts");
    }

    @Test
    void everyKindOfForeignObjectCounts(TestDatabase db) {
        List<String> kinds = List.of("CREATE VIEW %s.v AS SELECT 1 AS one", "CREATE SEQUENCE %s.seq",
                "CREATE FUNCTION %s.f() RETURNS int LANGUAGE sql AS 'SELECT 1'", "CREATE TYPE %s.mood AS ENUM ('ok')",
                "CREATE TYPE %s.pair AS (a int, b int)", "CREATE DOMAIN %s.positive AS int CHECK (VALUE > 0)");
        for (String ddl : kinds) {
            String schema = db.freshSchemaName("kind");
            db.execute("CREATE SCHEMA " + schema);
            db.execute(ddl.formatted(schema));
            try (Sluice sluice = client(db, schema, false)) {
                assertRefused(() -> sluice.stream("orders").register());
            }
            assertThat(new PgCatalog(db, schema).tables()).as(ddl).doesNotContain("migration_log");
        }
    }

    @Test
    void forcingInstallsBesideTheApplicationsTables(TestDatabase db) {
        String schema = db.freshSchemaName("forced");
        db.execute("CREATE SCHEMA " + schema);
        db.execute("CREATE TABLE " + schema + ".accounts (id bigint PRIMARY KEY)");
        try (Sluice sluice = client(db, schema, true)) {
            assertThat(sluice.stream("orders").register().name()).isEqualTo("orders");
            assertThat(sluice.stream("orders", String.class).producer().produce("x").id()).isPositive();
        }
        assertThat(new PgCatalog(db, schema).tables()).contains("accounts", "migration_log", "system_config");
        // Once the ledger exists the schema is Sluice's: later clients need no forcing.
        try (Sluice later = client(db, schema, false)) {
            assertThat(later.stream("more").register().name()).isEqualTo("more");
        }
    }

    @Test
    void anEmptyPreCreatedSchemaIsInstalledWithoutForcing(TestDatabase db) {
        String schema = db.freshSchemaName("precreated");
        db.execute("CREATE SCHEMA " + schema);
        try (Sluice sluice = client(db, schema, false)) {
            assertThat(sluice.system().register().version()).isEqualTo(6);
        }
        assertThat(new PgCatalog(db, schema).tables()).containsExactlyElementsOf(SystemRegistrationTest.CONTROL_PLANE);
    }

    @Test
    void aSchemaHoldingSluiceAlreadyIsFineEvenWithOtherObjectsAddedLater(TestDatabase db) {
        String schema = db.freshSchemaName("holds");
        try (Sluice sluice = client(db, schema, false)) {
            sluice.stream("orders").register();
        }
        db.execute("CREATE TABLE " + schema + ".audit (id bigint)");
        try (Sluice sluice = client(db, schema, false)) {
            assertThat(sluice.stream("orders").register().name()).isEqualTo("orders");
            assertThat(sluice.stream("second").register().name()).isEqualTo("second");
            assertThat(sluice.queue("jobs", String.class).enqueue("x")).isPositive();
        }
    }
}
