package dev.sluice.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.sluice.Consumption;
import dev.sluice.ErrorCode;
import dev.sluice.Outcome;
import dev.sluice.Outgoing;
import dev.sluice.PartitionExtension;
import dev.sluice.ProduceOptions;
import dev.sluice.Produced;
import dev.sluice.Producer;
import dev.sluice.Queue;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import dev.sluice.StreamConfig;
import dev.sluice.Worker;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The least-privilege setup of docs/security.md: an admin installs and registers, a runtime role with
 * only DML grants produces, consumes and works a queue, and when its producers run past the log
 * partitions the admin extends them.
 */
@SluiceTest
class LeastPrivilegeTest {

    /**
     * The grants of docs/security.md ("Least-privilege roles"), read from the page itself so the page
     * and this test cannot drift apart, for the quoted schema {@code s} and role {@code r}.
     */
    static List<String> runtimeGrants(String s, String r) throws Exception {
        String page = Files.readString(Path.of("..", "docs", "security.md"));
        String section = page.substring(page.indexOf("## Least-privilege roles"));
        section = section.substring(0, section.indexOf("\n## ", 1));
        StringBuilder sql = new StringBuilder();
        for (int at = section.indexOf("```sql"); at >= 0; at = section.indexOf("```sql", at)) {
            int end = section.indexOf("```", at + 6);
            sql.append(section, at + 6, end).append('\n');
            at = end + 3;
        }
        List<String> grants = new ArrayList<>();
        for (String line : sql.toString().lines().map(String::strip).toList()) {
            if (line.startsWith("GRANT ") || line.startsWith("ALTER DEFAULT PRIVILEGES ")) {
                assertThat(line).endsWith(" TO sluice_app;");
                grants.add(line.substring(0, line.length() - 1).replace("SCHEMA sluice ", "SCHEMA " + s + " ")
                        .replace("sluice_app", r));
            }
        }
        assertThat(grants).as("the documented grants").hasSize(5);
        return grants;
    }

    private static long count(TestDatabase db, String sql) throws Exception {
        try (Connection c = db.connect(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static SluiceException sluiceFailure(CompletableFuture<Produced> f) throws InterruptedException {
        try {
            f.get(30, TimeUnit.SECONDS);
            throw new AssertionError("expected a failure");
        } catch (ExecutionException e) {
            return (SluiceException) e.getCause();
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void aDmlOnlyRoleProducesConsumesAndWorksQueuesAndTheAdminExtendsPartitions(TestDatabase db) throws Exception {
        String schema = db.schema();
        String q = "\"" + schema + "\"";
        String role = "sluice_runtime_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        String password = UUID.randomUUID().toString();
        try (Sluice admin = Sluice.builder().dataSource(db.dataSource()).schema(schema).build()) {
            long streamId = admin.stream("orders").register(StreamConfig.builder().partitionSize(10).build()).id();
            admin.stream("orders").consumerGroup("billing").register();
            db.execute("CREATE ROLE " + role + " LOGIN PASSWORD '" + password + "'");
            try {
                for (String grant : runtimeGrants(q, role)) {
                    db.execute(grant);
                }
                PGSimpleDataSource runtimeDs = new PGSimpleDataSource();
                runtimeDs.setUrl(db.jdbcUrl());
                runtimeDs.setUser(role);
                runtimeDs.setPassword(password);
                try (Connection c = runtimeDs.getConnection(); Statement s = c.createStatement();
                     ResultSet rs = s.executeQuery("SELECT current_user, has_schema_privilege(current_user, '" + schema
                             + "', 'CREATE')")) {
                    rs.next();
                    assertThat(rs.getString(1)).isEqualTo(role);
                    assertThat(rs.getBoolean(2)).as("the runtime role may not run DDL").isFalse();
                }
                try (Sluice runtime = Sluice.builder().dataSource(runtimeDs).schema(schema).migrate(false).build()) {
                    runAsRuntime(db, admin, runtime, runtimeDs, q, streamId);
                }
            } finally {
                db.execute("DROP OWNED BY " + role);
                db.execute("DROP ROLE " + role);
            }
            assertThat(count(db, "SELECT count(*) FROM pg_roles WHERE rolname = '" + role + "'")).isZero();
        }
    }

    private static void runAsRuntime(TestDatabase db, Sluice admin, Sluice runtime, PGSimpleDataSource runtimeDs, String q,
                                     long streamId) throws Exception {
        // Produce and consume.
        Producer<String> p = runtime.stream("orders", String.class).producer();
        Set<String> received = ConcurrentHashMap.newKeySet();
        try (Consumption consumption = runtime.stream("orders", String.class).consumerGroup("billing").consume(m -> {
            received.add(m.payload());
            return Outcome.success();
        })) {
            for (int i = 0; i < 5; i++) {
                p.produce("early-" + i);
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> received.size() == 5);
        }

        // Work a queue.
        Queue<String> jobs = runtime.queue("emails", String.class);
        jobs.enqueue("welcome");
        jobs.enqueue("reminder");
        Set<String> done = ConcurrentHashMap.newKeySet();
        try (Worker w = jobs.work(job -> done.add(job.payload()))) {
            await().atMost(Duration.ofSeconds(30)).until(() -> done.size() == 2);
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> count(db, "SELECT count(*) FROM " + q + ".job") == 0);

        // Run past the registration-time partitions (ids below 1,040 for a partition size of 10).
        long written = 5;
        SluiceException refused = null;
        for (int round = 0; round < 20 && refused == null; round++) {
            List<Outgoing<String>> batch = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                batch.add(Outgoing.of("bulk-" + round + "-" + i, ProduceOptions.NONE));
            }
            try {
                written += p.produceBatch(batch).size();
            } catch (SluiceException e) {
                refused = e;
            }
        }
        assertThat(refused).as("the producers ran past the partitions").isNotNull();
        assertThat(refused.code()).isEqualTo(ErrorCode.PARTITION_NOT_CREATABLE);
        assertThat(refused.retryable()).isFalse();
        assertThat(refused.getMessage()).contains("extend-partitions orders");
        assertThat(written).isEqualTo(1005);
        // Every produce form says the same, and writes nothing.
        assertThat(sluiceFailure(p.produceAsync("async", ProduceOptions.NONE)).code()).isEqualTo(ErrorCode.PARTITION_NOT_CREATABLE);
        assertThatThrownBy(() -> p.produce("sync")).isInstanceOfSatisfying(SluiceException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.PARTITION_NOT_CREATABLE));
        try (Connection c = runtimeDs.getConnection()) {
            c.setAutoCommit(false);
            assertThatThrownBy(() -> p.produceInTransaction(c, "outbox", ProduceOptions.NONE))
                    .isInstanceOfSatisfying(SluiceException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.PARTITION_NOT_CREATABLE));
            c.rollback();
        }
        assertThatThrownBy(() -> runtime.stream("orders").extendPartitions(5)).as("extending is the admin's")
                .isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.PERMISSION_DENIED));
        String log = q + ".message_log_" + streamId;
        assertThat(count(db, "SELECT count(*) FROM " + log)).isEqualTo(written);

        // The admin extends; the runtime role produces again, in every form.
        PartitionExtension extension = admin.stream("orders").extendPartitions(30);
        assertThat(extension.created()).isNotEmpty();
        assertThat(extension.coveredUpTo()).isGreaterThan(extension.headId() + 30 * 10 - 1);
        assertThat(admin.stream("orders").extendPartitions(30).created()).as("idempotent").isEmpty();
        long headBefore = extension.headId();
        assertThat(p.produce("after").id()).isGreaterThan(headBefore);
        assertThat(p.produceAsync("after-async", ProduceOptions.NONE)).succeedsWithin(Duration.ofSeconds(30));
        try (Connection c = runtimeDs.getConnection()) {
            c.setAutoCommit(false);
            assertThat(p.produceInTransaction(c, "after-outbox", ProduceOptions.NONE).id()).isGreaterThan(headBefore);
            c.commit();
        }
        assertThat(count(db, "SELECT count(*) FROM " + log)).isEqualTo(written + 3);
    }
}
