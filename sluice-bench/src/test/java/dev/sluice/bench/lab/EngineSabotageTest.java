package dev.sluice.bench.lab;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.embedded.EmbeddedPostgresServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A quiet lab run of every engine (separate processes, no faults), then sabotage of each engine's data: every checker
 * passes the real run and fails each kind of breakage it exists to catch.
 */
class EngineSabotageTest {
    static EmbeddedPostgresServer pg;
    static Lab.Result run;

    @BeforeAll
    static void start() throws Exception {
        pg = EmbeddedPostgresServer.startTemporary();
        LabOptions quiet = new LabOptions(pg.jdbcUrl(), Duration.ofSeconds(8), Duration.ofSeconds(60), 1, 2, 30, 0.05, 0,
                Duration.ZERO, Duration.ZERO, Duration.ZERO, 0, Duration.ofSeconds(3), 17, Duration.ZERO, Duration.ZERO,
                Set.copyOf(LabEngines.NAMES), 40);
        run = new Lab(quiet, System.out::println).run();
    }

    @AfterAll
    static void stop() {
        pg.close();
    }

    @Test
    void everyEngineOfTheQuietRunPasses() {
        assertThat(run.verdict()).as(run.reason()).isEqualTo("pass");
        assertThat(run.sections().keySet()).containsAll(LabEngines.NAMES.subList(1, LabEngines.NAMES.size()));
        for (LabEngine.Section s : run.sections().values()) {
            assertThat(s.failure()).isNull();
        }
    }

    @Test
    void theQueueCheckerCatchesADoubleAckALostJobAndAWrongWait() throws Exception {
        LabEngine.Section real = run.sections().get(QueueEngine.NAME);
        assertThat((Long) real.counts().get("acked")).isPositive();
        assertThat((Long) real.counts().get("dead")).as("terminal plans").isPositive();
        assertThat((Long) real.counts().get("revived")).as("exhaust plans revived").isPositive();
        assertThat((Long) real.counts().get("deduplicated")).as("repeated unique keys").isPositive();
        assertThat((Long) real.counts().get("rejected")).as("invalid unique keys").isPositive();
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl()); Statement s = c.createStatement()) {
            assertThat(QueueChecker.check(c, true).failure()).isNull();

            // 1. A second live claim acked a job that was already acked.
            s.execute("BEGIN");
            s.execute("INSERT INTO sluice_lab.queue_ack (instance, call_id, job_id, claim_token, kind, returned, at)"
                    + " SELECT 'sabotage', 'sabotage-1', job_id, gen_random_uuid()::text, kind, true, now()"
                    + " FROM sluice_lab.queue_ack WHERE returned AND kind = 'complete' LIMIT 1");
            LabEngine.Section doubled = QueueChecker.check(c, true);
            assertThat(doubled.counts()).containsEntry("double_acks", 1L);
            assertThat(doubled.failure()).contains("double_acks 1");
            s.execute("ROLLBACK");

            // 2. An acked job vanishes (its run record is the only trace of it).
            s.execute("BEGIN");
            s.execute("DELETE FROM " + Ledger.SLUICE_SCHEMA + ".job_run WHERE id = (SELECT min(id) FROM " + Ledger.SLUICE_SCHEMA
                    + ".job_run WHERE status = 'succeeded' AND queue = '" + QueueEngine.QUEUE + "')");
            LabEngine.Section dropped = QueueChecker.check(c, true);
            assertThat(dropped.counts()).containsEntry("lost", 1L);
            assertThat(dropped.failure()).contains("lost 1");
            s.execute("ROLLBACK");

            // 3. A completion wait reports an end the job did not have.
            assertThat(scalar(c, "SELECT count(*) FROM sluice_lab.queue_wait WHERE outcome = 'ended'")).isPositive();
            s.execute("BEGIN");
            s.execute("UPDATE sluice_lab.queue_wait SET result = 'sabotage' WHERE ctid = (SELECT ctid FROM sluice_lab.queue_wait"
                    + " WHERE outcome = 'ended' AND status = 'succeeded' LIMIT 1)");
            assertThat(QueueChecker.check(c, true).failure()).contains("wait_mismatches 1");
            s.execute("ROLLBACK");

            // 4. A job appears that no producer attempted.
            s.execute("BEGIN");
            s.execute("UPDATE " + Ledger.SLUICE_SCHEMA + ".job_run SET headers = jsonb_set(headers, '{lab-tag}', '\"sabotage-9\"')"
                    + " WHERE id = (SELECT max(id) FROM " + Ledger.SLUICE_SCHEMA + ".job_run WHERE queue = '" + QueueEngine.QUEUE + "')");
            assertThat(QueueChecker.check(c, true).failure()).contains("unexpected");
            s.execute("ROLLBACK");
            assertThat(QueueChecker.check(c, true).failure()).isNull();
        }
    }

    private static long scalar(Connection c, String sql) throws Exception {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
