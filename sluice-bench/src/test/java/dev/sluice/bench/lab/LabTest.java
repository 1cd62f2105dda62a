package dev.sluice.bench.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.ProduceOptions;
import dev.sluice.Sluice;
import dev.sluice.embedded.EmbeddedPostgresServer;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The lab end to end (separate OS processes, real faults) and sabotage proving the checker can fail.
 * The first test is the CI smoke: every fault on — SIGKILLs, backend terminations, a PostgreSQL restart.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class LabTest {
    static EmbeddedPostgresServer pg;

    @BeforeAll
    static void start() {
        pg = EmbeddedPostgresServer.startTemporary();
    }

    @AfterAll
    static void stop() {
        pg.close();
    }

    @Test
    @Order(1)
    void ciSmokeWithEveryFaultPasses() throws Exception {
        List<String> lines = new CopyOnWriteArrayList<>();
        Lab.Result r = new Lab(LabOptions.smoke(), line -> {
            lines.add(line);
            System.out.println(line);
        }).keepData(true).run();
        System.out.println("lab smoke: " + r.summary(LabOptions.smoke()));
        // --keep-data: the embedded database stays after a pass, the last line says where and how to open it, and it
        // opens again (its password is in it) with the run's ledger.
        String kept = lines.stream().filter(l -> l.startsWith(Lab.KEPT)).findFirst().orElseThrow();
        Path dataDir = Path.of(kept.substring(Lab.KEPT.length(), kept.indexOf(';')));
        assertThat(kept).endsWith("sluice db psql --data-dir " + dataDir);
        try (EmbeddedPostgresServer reopened = EmbeddedPostgresServer.start(dataDir);
             Connection c = reopened.dataSource().getConnection()) {
            assertThat(scalar(c, "SELECT count(*) FROM sluice_lab.handler_call")).isPositive();
        } finally {
            Lab.deleteTree(dataDir);
        }
        assertThat(dataDir).doesNotExist();
        assertThat(r.verdict()).as(r.reason()).isEqualTo("pass");
        assertThat(r.check().lost()).isZero();
        assertThat(r.check().unexpected()).isZero();
        assertThat(r.check().unbucketed()).isZero();
        assertThat(r.check().orderViolations()).isZero();
        assertThat(r.faultsFired()).containsKeys("kill", "terminate", "restart", UnrelatedXidFault.KIND);
        assertThat(r.check().produced()).isGreaterThan(500);
        // Every bucket of the design shows up: skips are classified, not lost.
        assertThat(r.check().buckets().get(LabGroups.ROUTED)).containsKeys("delivered", "filtered");
        assertThat(r.check().buckets().get(LabGroups.PARALLEL)).containsKeys("delivered", "other_version");
        // The partitioned group is consumed, classified and checked: order per key, no key in two processes at once.
        assertThat(r.check().buckets().get(LabGroups.PARTITIONED)).containsKeys("delivered", "other_version");
        assertThat(r.check().orderViolationsByGroup()).containsEntry(LabGroups.PARTITIONED, 0L)
                .containsEntry(LabGroups.ORDERED, 0L);
        assertThat(r.check().keyOverlaps()).as(r.check().keyOverlapExample()).isZero();
        assertThat(r.summary(LabOptions.smoke())).containsEntry("key_overlaps", 0L);
        // What loaded the server, per statement (pg_stat_statements, loaded into the embedded server), most first.
        assertThat(r.serverStatements()).isNotEmpty().hasSizeLessThanOrEqualTo(ServerStatements.TOP)
                .allSatisfy(st -> assertThat((Long) st.get("calls")).isPositive());
        assertThat(r.serverStatements()).extracting(st -> (Double) st.get("total_s")).isSortedAccordingTo(java.util.Comparator.reverseOrder());
        assertThat(r.summary(LabOptions.smoke())).containsKeys("redelivery_from_kill_max_s", "kills_leaving_no_consumer", "redelivery_key_held_max_s");
        // Where the CPU went while the faults fired: every part of the run is seen, and no more than the machine has.
        assertThat(r.summary(LabOptions.smoke())).containsEntry("cpu_cores", r.cpuCores());
        assertThat(r.cpuCores()).containsKeys(LabCpu.SERVER, LabCpu.CONSUMERS_STARTING, LabCpu.CONSUMERS, LabCpu.PRODUCERS,
                LabCpu.ORCHESTRATOR, LabCpu.TOTAL);
        assertThat(r.cpuCores().get(LabCpu.SERVER)).as("the embedded server's processes").isPositive();
        assertThat(r.cpuCores().get(LabCpu.PRODUCERS)).isPositive();
        assertThat(r.cpuCores().get(LabCpu.CONSUMERS_STARTING) + r.cpuCores().get(LabCpu.CONSUMERS)).isPositive();
        assertThat(r.cpuCores().get(LabCpu.TOTAL)).isLessThanOrEqualTo(Runtime.getRuntime().availableProcessors() * 1.1 + 0.1);
        for (Double seconds : r.redeliverySeconds().values()) {
            if (seconds != null) {
                assertThat(seconds).as("redelivery after a kill").isLessThan(LabOptions.smoke().leaseTimeout().toSeconds() + 5.0);
            }
        }
        // Every engine ran under the faults and was checked: its section is there, passed, and did its work.
        assertThat(r.sections().keySet()).containsExactlyInAnyOrderElementsOf(LabEngines.NAMES.subList(1, LabEngines.NAMES.size()));
        r.sections().forEach((name, section) -> assertThat(section.failure()).as(name).isNull());
        assertThat((Long) r.sections().get(QueueEngine.NAME).counts().get("acked")).isPositive();
        assertThat((Long) r.sections().get(QueueEngine.NAME).counts().get("revived")).isPositive();
        assertThat((Long) r.sections().get(ScheduleEngine.NAME).counts().get("fires")).isPositive();
        assertThat((Long) r.sections().get(ScheduleEngine.NAME).counts().get("runners")).isGreaterThan(1);
        // Stalled holders came back to a lock taken over: their stale writes were fenced off.
        assertThat((Long) r.sections().get(LockEngine.NAME).counts().get("stalled_refused")).isPositive();
    }

    /** A quiet run against the shared server, then sabotage of its data. */
    @Test
    @Order(2)
    void sabotageFlipsTheVerdictToFail() throws Exception {
        LabOptions quiet = new LabOptions(pg.jdbcUrl(), Duration.ofSeconds(6), Duration.ofSeconds(60), 1, 2, 40, 0.05, 0,
                Duration.ZERO, Duration.ZERO, Duration.ZERO, 0.05, Duration.ofSeconds(3), 11, Duration.ZERO, Duration.ZERO);
        Lab.Result r = new Lab(quiet, System.out::println).run();
        assertThat(r.verdict()).as(r.reason()).isEqualTo("pass");
        long streamId;
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl())) {
            streamId = scalar(c, "SELECT id FROM sluice_lab_data.stream_config WHERE name = 'lab.events'");
            // Every consumer process said when its stream groups ran (the redelivery bound counts from then).
            assertThat(scalar(c, "SELECT count(DISTINCT instance) FROM sluice_lab.consumer_ready")).isEqualTo(quiet.consumers());
            assertThat(Lab.failure(LabChecker.check(c, streamId))).isNull();

            // 1. One delivered ledger row goes missing: that message is in no bucket.
            long victim = scalar(c, "SELECT message_id FROM sluice_lab.handler_call WHERE group_name = 'parallel'"
                    + " AND outcome = 'success' GROUP BY message_id HAVING count(DISTINCT (instance, call_no)) = 1 LIMIT 1");
            try (Statement s = c.createStatement()) {
                s.execute("BEGIN");
                s.execute("DELETE FROM sluice_lab.handler_call WHERE group_name = 'parallel' AND message_id = " + victim);
                LabChecker.Check broken = LabChecker.check(c, streamId);
                assertThat(broken.lost()).isEqualTo(1);
                assertThat(Lab.failure(broken)).isNotNull();
                s.execute("ROLLBACK");
            }

            // 2. One committed message disappears from the log (its partition is still there).
            try (Statement s = c.createStatement()) {
                s.execute("BEGIN");
                s.execute("DELETE FROM sluice_lab_data.message_log_" + streamId + " WHERE id = (SELECT message_id FROM"
                        + " sluice_lab.produce_result WHERE status = 'committed' LIMIT 1)");
                LabChecker.Check broken = LabChecker.check(c, streamId);
                assertThat(broken.committedMissing()).isEqualTo(1);
                assertThat(Lab.failure(broken)).isNotNull();
                s.execute("ROLLBACK");
            }
            assertThat(Lab.failure(LabChecker.check(c, streamId))).isNull();

            // 3. Retention drops the first partition: its messages are checked from the ledger, and one of them that no
            // handler ran is lost even though it is gone from the log.
            try (Statement s = c.createStatement()) {
                s.execute("BEGIN");
                String first = "sluice_lab_data.message_log_" + streamId + "_0";
                long inFirst = scalar(c, "SELECT count(*) FROM " + first);
                assertThat(inFirst).isPositive();
                s.execute("ALTER TABLE sluice_lab_data.message_log_" + streamId + " DETACH PARTITION " + first);
                s.execute("DROP TABLE " + first);
                LabChecker.Check dropped = LabChecker.check(c, streamId);
                assertThat(dropped.retentionDropped()).isEqualTo(inFirst);
                assertThat(dropped.committedMissing()).isZero();
                assertThat(Lab.failure(dropped)).isNull();
                s.execute("DELETE FROM sluice_lab.handler_call WHERE group_name = 'parallel' AND message_id = (SELECT min(message_id)"
                        + " FROM sluice_lab.handler_call WHERE group_name = 'parallel' AND outcome = 'success' AND message_id < "
                        + Lab.partitionSize(quiet) + ")");
                LabChecker.Check broken = LabChecker.check(c, streamId);
                assertThat(broken.buckets().get(LabGroups.PARALLEL)).containsEntry("unbucketed", 1L);
                assertThat(Lab.failure(broken)).isNotNull();
                s.execute("ROLLBACK");
            }

            // 4. Two processes run calls of one key of the partitioned group at the same time.
            try (Statement s = c.createStatement()) {
                s.execute("BEGIN");
                long keyed = scalar(c, "SELECT id FROM sluice_lab_data.message_log_" + streamId
                        + " WHERE message_key IS NOT NULL LIMIT 1");
                String tag = "(SELECT convert_from(payload, 'UTF8')::jsonb->>'tag' FROM sluice_lab_data.message_log_" + streamId
                        + " WHERE id = " + keyed + ")";
                s.execute("INSERT INTO sluice_lab.handler_call (group_name, instance, call_no, message_id, tag, attempt, started_at,"
                        + " ended_at, outcome) VALUES"
                        + " ('partitioned', 'sabotage-a', 1, " + keyed + ", " + tag + ", 9, now(), now() + interval '10 s', 'failed'),"
                        + " ('partitioned', 'sabotage-b', 1, " + keyed + ", " + tag + ", 9, now() + interval '1 s', NULL, NULL),"
                        + " ('partitioned', 'sabotage-b', 1, " + keyed + ", " + tag + ", 9, now() + interval '1 s',"
                        + " now() + interval '2 s', 'failed')");
                LabChecker.Check broken = LabChecker.check(c, streamId);
                assertThat(broken.keyOverlaps()).isEqualTo(1);
                assertThat(broken.keyOverlapExample()).contains("sabotage-b").contains("sabotage-a");
                assertThat(Lab.failure(broken)).contains("key overlaps 1");
                s.execute("ROLLBACK");
            }
            assertThat(Lab.failure(LabChecker.check(c, streamId))).isNull();

            // 5. A handler ran a message whose payload is not the one its producer wrote under that id.
            try (Statement s = c.createStatement()) {
                s.execute("BEGIN");
                s.execute("UPDATE sluice_lab.handler_call SET tag = 'sabotage-x' WHERE message_id = " + victim);
                assertThat(LabChecker.check(c, streamId).unexpected()).isPositive();
                s.execute("ROLLBACK");
            }

            // 6. A killed consumer held a message, which started again 20 s after the kill: late while another consumer
            // ran its groups the whole time; 5 s of it (within the bound) when the only other one ran 15 s after.
            try (Statement s = c.createStatement()) {
                s.execute("BEGIN");
                s.execute("INSERT INTO sluice_lab.fault (kind, detail, at) VALUES ('kill', 'sabotage-k', now() + interval '1 h')");
                s.execute("INSERT INTO sluice_lab.handler_call (group_name, instance, call_no, message_id, tag, attempt, started_at,"
                        + " ended_at, outcome) VALUES"
                        + " ('parallel', 'sabotage-k', 1, " + victim + ", NULL, 7, now() + interval '1 h' - interval '1 s', NULL, NULL),"
                        + " ('parallel', 'sabotage-r', 1, " + victim + ", NULL, 8, now() + interval '1 h 20 s', NULL, NULL)");
                s.execute("INSERT INTO sluice_lab.consumer_ready (instance, at) VALUES ('sabotage-r', now() + interval '1 h 15 s'),"
                        + " ('sabotage-k', now())");
                LabChecker.check(c, streamId);
                LabTimeline.Redelivery late = LabTimeline.redeliveries(c, LabTimeline.running(c)).stream()
                        .filter(x -> x.kill().equals("sabotage-k")).findFirst().orElseThrow();
                assertThat(late.redeliverySeconds()).isCloseTo(20.0, org.assertj.core.data.Offset.offset(0.01));
                assertThat(late.coveredSeconds()).isCloseTo(5.0, org.assertj.core.data.Offset.offset(0.01));
                assertThat(LabTimeline.killsLeavingNoConsumer(c, LabTimeline.running(c))).isPositive();
                s.execute("INSERT INTO sluice_lab.consumer_ready (instance, at) VALUES ('sabotage-o', now())");
                s.execute("INSERT INTO sluice_lab.handler_call (group_name, instance, call_no, message_id, tag, attempt, started_at,"
                        + " ended_at, outcome) VALUES ('routed', 'sabotage-o', 1, " + victim + ", NULL, 1,"
                        + " now() + interval '1 h 30 s', now() + interval '1 h 31 s', 'success')");
                LabChecker.check(c, streamId);
                late = LabTimeline.redeliveries(c, LabTimeline.running(c)).stream().filter(x -> x.kill().equals("sabotage-k")).findFirst().orElseThrow();
                assertThat(late.coveredSeconds()).isCloseTo(20.0, org.assertj.core.data.Offset.offset(0.01));
                assertThat(late.coveredSeconds()).isGreaterThan(Lab.redeliveryBoundSeconds(quiet));
                s.execute("ROLLBACK");
            }

            // 7. A killed consumer held a keyed message of the partitioned group; its next delivery came 18 s after the kill,
            // after the new holder had run an earlier message of the key for 15 s of them: 3 s count. In the parallel group,
            // which runs a key's messages side by side, all 18 s count.
            try (Statement s = c.createStatement()) {
                s.execute("BEGIN");
                long later;
                long earlier;
                try (ResultSet rs = s.executeQuery("SELECT m.id, o.id FROM sluice_lab_data.message_log_" + streamId + " m JOIN"
                        + " sluice_lab_data.message_log_" + streamId + " o ON o.message_key = m.message_key AND o.id < m.id LIMIT 1")) {
                    assertThat(rs.next()).isTrue();
                    later = rs.getLong(1);
                    earlier = rs.getLong(2);
                }
                s.execute("INSERT INTO sluice_lab.fault (kind, detail, at) VALUES ('kill', 'sabotage-k2', now() + interval '2 h')");
                s.execute("INSERT INTO sluice_lab.handler_call (group_name, instance, call_no, message_id, tag, attempt, started_at,"
                        + " ended_at, outcome) VALUES"
                        + " ('partitioned', 'sabotage-k2', 1, " + later + ", NULL, 1, now() + interval '2 h' - interval '1 s', NULL, NULL),"
                        + " ('partitioned', 'sabotage-r2', 1, " + earlier + ", NULL, 1, now() + interval '2 h 1 s',"
                        + " now() + interval '2 h 16 s', 'success'),"
                        + " ('partitioned', 'sabotage-r2', 2, " + later + ", NULL, 1, now() + interval '2 h 18 s', NULL, NULL)");
                s.execute("INSERT INTO sluice_lab.consumer_ready (instance, at) VALUES ('sabotage-r2', now()), ('sabotage-k2', now())");
                LabChecker.check(c, streamId);
                LabTimeline.Redelivery behindKey = LabTimeline.redeliveries(c, LabTimeline.running(c)).stream()
                        .filter(x -> x.kill().equals("sabotage-k2")).findFirst().orElseThrow();
                assertThat(behindKey.redeliverySeconds()).isCloseTo(18.0, org.assertj.core.data.Offset.offset(0.01));
                assertThat(behindKey.keyHeldSeconds()).isCloseTo(15.0, org.assertj.core.data.Offset.offset(0.01));
                assertThat(behindKey.coveredSeconds()).isCloseTo(3.0, org.assertj.core.data.Offset.offset(0.01));
                s.execute("UPDATE sluice_lab.handler_call SET group_name = 'parallel' WHERE instance IN ('sabotage-k2', 'sabotage-r2')");
                LabChecker.check(c, streamId);
                LabTimeline.Redelivery side = LabTimeline.redeliveries(c, LabTimeline.running(c)).stream()
                        .filter(x -> x.kill().equals("sabotage-k2")).findFirst().orElseThrow();
                assertThat(side.keyHeldSeconds()).isZero();
                assertThat(side.coveredSeconds()).isCloseTo(18.0, org.assertj.core.data.Offset.offset(0.01))
                        .isGreaterThan(Lab.redeliveryBoundSeconds(quiet));
                s.execute("ROLLBACK");
            }

            // 8. A message delivered again without its attempt counted (as a partitioned bucket's re-run once was): the
            // second call's attempt is not above the first's.
            try (Statement s = c.createStatement()) {
                s.execute("BEGIN");
                s.execute("INSERT INTO sluice_lab.handler_call (group_name, instance, call_no, message_id, tag, attempt, started_at,"
                        + " ended_at, outcome) SELECT group_name, 'sabotage-u', 1, message_id, tag, attempt, started_at + interval '1 h',"
                        + " ended_at + interval '1 h', outcome FROM sluice_lab.handler_call WHERE group_name = 'parallel'"
                        + " AND message_id = " + victim + " AND outcome = 'success'");
                LabChecker.Check broken = LabChecker.check(c, streamId);
                assertThat(broken.uncountedRedeliveries()).isEqualTo(1);
                assertThat(broken.uncountedExample()).contains("parallel message " + victim).contains("sabotage-u #1 attempt 1");
                assertThat(Lab.failure(broken)).contains("uncounted redeliveries 1");
                // Counted (attempt 2), the same redelivery is fine.
                s.execute("UPDATE sluice_lab.handler_call SET attempt = 2 WHERE instance = 'sabotage-u'");
                assertThat(LabChecker.check(c, streamId).uncountedRedeliveries()).isZero();
                s.execute("ROLLBACK");
            }
        }

        // 6. A cursor advanced past a message nobody resolved (produced while no consumer runs).
        org.postgresql.ds.PGSimpleDataSource ds = new org.postgresql.ds.PGSimpleDataSource();
        ds.setUrl(pg.jdbcUrl());
        long id;
        try (Sluice sluice = Sluice.builder().dataSource(ds).schema(Ledger.SLUICE_SCHEMA).build();
             Connection c = ds.getConnection()) {
            c.setAutoCommit(false);
            id = sluice.stream(Ledger.STREAM, String.class).producer()
                    .produceInTransaction(c, "{\"tag\": \"sabotage-1\", \"n\": 1}", ProduceOptions.NONE).id();
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO sluice_lab.produce_attempt (tag, producer, schema_version,"
                    + " at) VALUES ('sabotage-1', 'test', 1, now())");
                 PreparedStatement pr = c.prepareStatement("INSERT INTO sluice_lab.produce_result (tag, status, message_id, at)"
                    + " VALUES ('sabotage-1', 'committed', ?, now())")) {
                ps.executeUpdate();
                pr.setLong(1, id);
                pr.executeUpdate();
            }
            c.commit();
        }
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl()); Statement s = c.createStatement()) {
            s.execute("UPDATE sluice_lab_data.consumer_group_cursor_" + streamId + " SET claimed = " + id + ", committed = " + id
                    + ", settled_head = " + id + " WHERE consumer_group_id = (SELECT id FROM sluice_lab_data.consumer_group_config"
                    + " WHERE name = 'parallel')");
            LabChecker.Check broken = LabChecker.check(c, streamId);
            assertThat(broken.buckets().get(LabGroups.PARALLEL)).containsEntry("unbucketed", 1L);
            assertThat(Lab.failure(broken)).isNotNull();
        }
    }

    /**
     * An unrelated transaction holds an xid for two leases in the middle of a quiet run: it fires, another
     * session sees it holding its xid to the end, the ledger records it, and nothing is lost.
     */
    @Test
    @Order(3)
    void anUnrelatedLongTransactionFiresAndIsRecorded() throws Exception {
        LabOptions pinned = new LabOptions(pg.jdbcUrl(), Duration.ofSeconds(10), Duration.ofSeconds(60), 1, 2, 40, 0, 0,
                Duration.ZERO, Duration.ZERO, Duration.ZERO, 0, Duration.ofSeconds(2), 13,
                Duration.ofMillis(4_500), Duration.ofSeconds(4));
        List<String> progress = new CopyOnWriteArrayList<>();
        Lab.Result r = new Lab(pinned, line -> {
            System.out.println(line);
            progress.add(line);
        }).run();
        assertThat(r.faultsFired()).containsEntry(UnrelatedXidFault.KIND, 1);
        assertThat(progress).anyMatch(l -> l.contains("unrelated transaction xid") && l.contains("(held to the end)"));
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl())) {
            assertThat(scalar(c, "SELECT count(*) FROM sluice_lab.fault WHERE kind = '" + UnrelatedXidFault.KIND
                    + "' AND detail LIKE 'xid % idle for 4s'")).isEqualTo(1);
            assertThat(scalar(c, "SELECT count(*) FROM pg_stat_activity WHERE application_name = '"
                    + UnrelatedXidFault.APPLICATION_NAME + "'")).as("the pin's connection was closed").isZero();
        }
        assertThat(r.check().lost()).isZero();
        assertThat(r.verdict()).as(r.reason()).isEqualTo("pass");
    }

    @Test
    void anUnrelatedTransactionMustHoldLessThanItsInterval() {
        LabOptions smoke = LabOptions.smoke();
        assertThat(smoke.pins()).as("CI's lab run includes the fault").isTrue();
        assertThat(smoke.pinFor()).isGreaterThan(smoke.leaseTimeout().multipliedBy(2));
        for (Duration[] bad : new Duration[][] {{Duration.ofSeconds(5), Duration.ZERO},
                {Duration.ofSeconds(5), Duration.ofSeconds(5)}, {Duration.ofSeconds(-1), Duration.ofSeconds(1)}}) {
            assertThatThrownBy(() -> new LabOptions(null, Duration.ofSeconds(10), Duration.ofSeconds(10), 1, 1, 1, 0, 0,
                    Duration.ZERO, Duration.ZERO, Duration.ZERO, 0, Duration.ofSeconds(3), 1, bad[0], bad[1]))
                    .isInstanceOf(IllegalArgumentException.class);
        }
    }

    private static long scalar(Connection c, String sql) throws Exception {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
