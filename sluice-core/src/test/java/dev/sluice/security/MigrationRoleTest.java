package dev.sluice.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.sluice.Consumption;
import dev.sluice.ErrorCode;
import dev.sluice.MaintenanceReport;
import dev.sluice.MigrationStatus;
import dev.sluice.Migrations;
import dev.sluice.Outcome;
import dev.sluice.Producer;
import dev.sluice.Queue;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import dev.sluice.StreamConfig;
import dev.sluice.SweepResult;
import dev.sluice.Worker;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The two roles of docs/security.md: a migration role that owns the schema applies the Flyway export and registers
 * the streams; a runtime role with the documented DML grants (run by the migration role, so its default privileges
 * cover every table it creates later) produces, consumes, works a queue and runs maintenance. What needs ownership
 * is refused with a code (a new stream: SLU-0123) or reported as skipped (partitions ahead, retention), never a raw
 * SQL error, and the migration role's own pass does it.
 */
@SluiceTest
class MigrationRoleTest {

    @TempDir
    Path tmp;

    private static PGSimpleDataSource login(TestDatabase db, String role, String password) {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(db.jdbcUrl());
        ds.setUser(role);
        ds.setPassword(password);
        return ds;
    }

    private static void run(PGSimpleDataSource ds, String sql) throws Exception {
        try (Connection c = ds.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    private static long count(TestDatabase db, String sql) throws Exception {
        try (Connection c = db.connect(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** The two roles and a schema the superuser created for the migration role, which ran the runtime grants. */
    private record Roles(String schema, String q, String migrator, String app, PGSimpleDataSource migratorDs,
                         PGSimpleDataSource appDs) {
    }

    @FunctionalInterface
    private interface WithRoles {
        void run(Roles roles) throws Exception;
    }

    private static void withRoles(TestDatabase db, String hint, WithRoles body) throws Exception {
        String schema = db.freshSchemaName(hint);
        String q = "\"" + schema + "\"";
        String suffix = UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        String migrator = "sluice_migrator_" + suffix;
        String app = "sluice_app_" + suffix;
        String migratorPassword = UUID.randomUUID().toString();
        String appPassword = UUID.randomUUID().toString();
        // As the superuser, once: the two roles and the schema, owned by the migration role.
        db.execute("CREATE ROLE " + migrator + " LOGIN PASSWORD '" + migratorPassword + "'");
        db.execute("CREATE ROLE " + app + " LOGIN PASSWORD '" + appPassword + "'");
        try {
            db.execute("CREATE SCHEMA " + q + " AUTHORIZATION " + migrator);
            PGSimpleDataSource migratorDs = login(db, migrator, migratorPassword);
            // As the migration role: the runtime grants of docs/security.md, before any table exists.
            for (String grant : LeastPrivilegeTest.runtimeGrants(q, app)) {
                run(migratorDs, grant);
            }
            body.run(new Roles(schema, q, migrator, app, migratorDs, login(db, app, appPassword)));
        } finally {
            db.execute("DROP SCHEMA IF EXISTS " + q + " CASCADE");
            db.execute("DROP OWNED BY " + app);
            db.execute("DROP OWNED BY " + migrator);
            db.execute("DROP ROLE " + app);
            db.execute("DROP ROLE " + migrator);
        }
    }

    @Test
    void theMigrationRoleOwnsTheSchemaAndTheRuntimeRoleRunsWithDmlOnly(TestDatabase db) throws Exception {
        Path dir = tmp.resolve("flyway");
        withRoles(db, "roles", r -> {
            // The migration role applies the Flyway export, then registers the stream at deploy time.
            Sluice.builder().jdbcUrl("jdbc:postgresql://localhost/unused").schema(r.schema()).build().migrations()
                    .export(Migrations.Format.FLYWAY, dir);
            Flyway.configure().dataSource(r.migratorDs()).schemas(r.schema()).table("sluice_schema_history")
                    .locations("filesystem:" + dir.toAbsolutePath()).load().migrate();
            StreamConfig config = StreamConfig.builder().partitionSize(10).retention(Duration.ofHours(1)).build();
            try (Sluice owner = Sluice.builder().dataSource(r.migratorDs()).schema(r.schema()).migrate(false)
                    .maintenance(false).build();
                 Sluice runtime = Sluice.builder().dataSource(r.appDs()).schema(r.schema()).migrate(false)
                         .maintenance(false).build()) {
                long streamId = owner.stream("orders").register(config).id();
                owner.stream("orders").consumerGroup("billing").register();
                asRuntime(db, owner, runtime, config, r.q(), streamId);
            }
        });
    }

    /**
     * Sluice's own migrator as the migration role: the schema exists (the superuser made it), and the role has no CREATE
     * on the database, which the first step's CREATE SCHEMA IF NOT EXISTS would need.
     */
    @Test
    void sluiceMigratesAPreCreatedSchemaAsTheMigrationRole(TestDatabase db) throws Exception {
        withRoles(db, "own_migrator", r -> {
            try (Sluice owner = Sluice.builder().dataSource(r.migratorDs()).schema(r.schema()).maintenance(false).build();
                 Sluice runtime = Sluice.builder().dataSource(r.appDs()).schema(r.schema()).migrate(false)
                         .maintenance(false).build()) {
                assertThat(owner.migrations().up()).allSatisfy(s -> assertThat(s.state()).isEqualTo(MigrationStatus.State.CURRENT));
                owner.stream("orders").register();
                assertThat(runtime.stream("orders", String.class).producer().produce("o-1").id()).isEqualTo(1);
                runtime.queue("emails", String.class).enqueue("welcome");
                assertThatThrownBy(() -> runtime.stream("invoices").register()).isInstanceOfSatisfying(SluiceException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.REGISTRATION_NOT_PERMITTED));
                assertThat(runtime.migrations().status()).hasSize(2)
                        .allSatisfy(s -> assertThat(s.state()).isEqualTo(MigrationStatus.State.CURRENT));
            }
        });
    }

    private static void asRuntime(TestDatabase db, Sluice owner, Sluice runtime, StreamConfig config, String q, long streamId)
            throws Exception {
        // The application declares its streams at start: an existing one registers as it is.
        assertThat(runtime.stream("orders").register(config).id()).isEqualTo(streamId);
        // Produce 35 messages (partitions 0..3) and consume them all.
        Set<String> received = ConcurrentHashMap.newKeySet();
        try (Consumption c = runtime.stream("orders", String.class).consumerGroup("billing").consume(m -> {
            received.add(m.payload());
            return Outcome.success();
        })) {
            Producer<String> p = runtime.stream("orders", String.class).producer();
            for (int i = 0; i < 35; i++) {
                p.produce("o-" + i);
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> received.size() == 35);
        }
        // Work a queue.
        Queue<String> jobs = runtime.queue("emails", String.class);
        jobs.enqueue("welcome");
        Set<String> done = ConcurrentHashMap.newKeySet();
        try (Worker w = jobs.work(job -> done.add(job.payload()))) {
            await().atMost(Duration.ofSeconds(30)).until(() -> done.contains("welcome"));
        }

        // A new stream needs the migration role: coded, and nothing written.
        assertThatThrownBy(() -> runtime.stream("invoices").register()).isInstanceOfSatisfying(SluiceException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.REGISTRATION_NOT_PERMITTED);
            assertThat(e.retryable()).isFalse();
            assertThat(e.getMessage()).contains("sluice stream register invoices").contains("migration role");
        });
        assertThat(count(db, "SELECT count(*) FROM " + q + ".stream_config WHERE name = 'invoices'")).isZero();

        // Maintenance as the runtime role: the row sweeps run; what needs the log's owner is skipped, not failed.
        db.execute("UPDATE " + q + ".message_log_" + streamId + " SET created_at = now() - interval '2 hours'");
        MaintenanceReport report = runtime.maintenance().runOnce();
        assertThat(report.ok()).as(report.toString()).isTrue();
        SweepResult ahead = report.sweep("partitions_ahead").orElseThrow();
        assertThat(ahead.removed()).isZero();
        assertThat(ahead.skipped()).contains("stream 'orders'").contains("extend-partitions orders");
        long partitions = count(db, "SELECT count(*) FROM pg_inherits WHERE inhparent = '" + q + ".message_log_" + streamId
                + "'::regclass");
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            SweepResult retention = runtime.maintenance().runOnce().sweep("retention").orElseThrow();
            assertThat(retention.ok()).isTrue();
            assertThat(retention.skipped()).contains("may not drop log partitions").contains("migration role");
        });
        assertThat(count(db, "SELECT count(*) FROM " + q + ".message_log_" + streamId)).isEqualTo(35);

        // The migration role's pass does both.
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            MaintenanceReport own = owner.maintenance().runOnce();
            assertThat(own.ok()).as(own.toString()).isTrue();
            assertThat(own.sweeps()).allSatisfy(r -> assertThat(r.skipped()).isNull());
            assertThat(count(db, "SELECT count(*) FROM " + q + ".message_log_" + streamId)).isLessThan(35);
        });
        String log = q + ".message_log_" + streamId;
        assertThat(count(db, "SELECT count(*) FROM (VALUES (to_regclass('" + log + "_0')), (to_regclass('" + log + "_"
                + partitions + "'))) v(t) WHERE t IS NOT NULL")).as("partition 0 dropped, one past the registration's made")
                .isEqualTo(1);
        assertThat(count(db, "SELECT count(*) FROM pg_class WHERE oid = to_regclass('" + log + "_" + partitions + "')")).isEqualTo(1);

        // The migration role registers the new stream; the runtime role then uses it.
        owner.stream("invoices").register();
        runtime.stream("invoices").consumerGroup("audit").register(); // groups are rows only
        Producer<String> invoices = runtime.stream("invoices", String.class).producer();
        assertThat(invoices.produce("i-1").id()).isEqualTo(1);
        assertThat(runtime.migrations().status()).hasSize(3)
                .allSatisfy(s -> assertThat(s.state()).isEqualTo(MigrationStatus.State.CURRENT));
    }
}
