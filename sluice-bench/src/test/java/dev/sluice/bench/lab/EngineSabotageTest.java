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
        assertThat((Long) real.counts().get("dead")).as("terminal plans: %s", real.counts()).isPositive();
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

            // Not a double ack: the ledger wrote one ack row twice (a batch whose commit reply was lost is retried).
            s.execute("BEGIN");
            s.execute("INSERT INTO sluice_lab.queue_ack SELECT * FROM sluice_lab.queue_ack WHERE returned AND kind = 'complete' LIMIT 1");
            assertThat(QueueChecker.check(c, true).failure()).isNull();
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

    @Test
    void theScheduleCheckerCatchesADoubleFireAMissedDueTimeAndAnOffGridFire() throws Exception {
        LabEngine.Section real = run.sections().get(ScheduleEngine.NAME);
        assertThat(real.failure()).isNull();
        assertThat((Long) real.counts().get("fires")).isPositive();
        assertThat((Long) real.counts().get("schedules")).isEqualTo(ScheduleEngine.PLANS.size());
        assertThat((Long) real.counts().get("runners")).as("every process runs a runner; more than one fired").isGreaterThan(1);
        String log;
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl())) {
            log = Ledger.SLUICE_SCHEMA + ".message_log_" + scalar(c, "SELECT id FROM " + Ledger.SLUICE_SCHEMA
                    + ".stream_config WHERE name = '" + ScheduleEngine.STREAM + "'");
        }
        String oneSecond = "headers->>'sluice-schedule' = 'lab-every-1s'";
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl()); Statement s = c.createStatement()) {
            // 1. A due time fired twice (a second runner got past the cursor lock and the idempotency key).
            s.execute("BEGIN");
            s.execute("INSERT INTO " + log + " (headers, payload) SELECT headers, payload FROM " + log + " WHERE " + oneSecond
                    + " ORDER BY id LIMIT 1");
            assertThat(ScheduleChecker.check(c).failure()).contains("double_fires 1");
            s.execute("ROLLBACK");

            // 2. A due time between the first and the last never fired.
            s.execute("BEGIN");
            s.execute("DELETE FROM " + log + " WHERE id = (SELECT id FROM " + log + " WHERE " + oneSecond
                    + " ORDER BY id OFFSET 1 LIMIT 1)");
            assertThat(ScheduleChecker.check(c).failure()).contains("missed 1");
            s.execute("ROLLBACK");

            // 3. A queue fire for a due time that is not on the schedule's grid.
            s.execute("BEGIN");
            s.execute("UPDATE " + Ledger.SLUICE_SCHEMA + ".job SET headers = jsonb_set(headers, '{sluice-due-at}',"
                    + " to_jsonb(to_char((headers->>'sluice-due-at')::timestamptz AT TIME ZONE 'UTC' + interval '1 hour 500 ms',"
                    + " 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'))) WHERE id = (SELECT max(id) FROM " + Ledger.SLUICE_SCHEMA
                    + ".job WHERE queue = '" + ScheduleEngine.QUEUE + "')");
            assertThat(ScheduleChecker.check(c).failure()).contains("off_grid 1");
            s.execute("ROLLBACK");
            assertThat(ScheduleChecker.check(c).failure()).isNull();
        }
    }

    @Test
    void theLockCheckerCatchesAStaleWriteLetThroughAWrongRefusalAndReusedOrFallingTokens() throws Exception {
        LabEngine.Section real = run.sections().get(LockEngine.NAME);
        assertThat(real.failure()).isNull();
        assertThat((Long) real.counts().get("accepted")).isPositive();
        assertThat((Long) real.counts().get("holders")).isGreaterThan(1);
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl()); Statement s = c.createStatement()) {
            String lock = "(SELECT lock FROM sluice_lab.lock_write WHERE accepted GROUP BY lock HAVING max(token) > 1 LIMIT 1)";
            // 1. The resource let a write through under a token lower than one it had accepted.
            s.execute("BEGIN");
            s.execute("INSERT INTO sluice_lab.lock_write (instance, lock, token, seen_token, accepted, serial, held_until,"
                    + " checked_at, stalled) SELECT 'sabotage', w.lock, 1, max(w.token), true, max(w.serial) + 1, now(), now(), true"
                    + " FROM sluice_lab.lock_write w WHERE w.lock = " + lock + " AND w.accepted GROUP BY w.lock");
            assertThat(LockChecker.check(c).failure()).contains("stale_accepted 1");
            s.execute("ROLLBACK");

            // 2. A write was refused while its writer still held the lock.
            s.execute("BEGIN");
            s.execute("INSERT INTO sluice_lab.lock_write (instance, lock, token, seen_token, accepted, held_until, checked_at,"
                    + " stalled) VALUES ('sabotage', 'lab-lock-0', 1, 2, false, now() + interval '1 second', now(), false)");
            assertThat(LockChecker.check(c).failure()).contains("refused_while_held 1");
            s.execute("ROLLBACK");

            // Not a reused token: the ledger wrote one acquisition row twice (a retried batch).
            s.execute("BEGIN");
            s.execute("INSERT INTO sluice_lab.lock_acquire SELECT * FROM sluice_lab.lock_acquire ORDER BY expires_at DESC LIMIT 1");
            assertThat(LockChecker.check(c).failure()).isNull();
            s.execute("ROLLBACK");

            // 3. Two acquisitions got one fencing token; 4. a later acquisition got a lower token.
            s.execute("BEGIN");
            s.execute("INSERT INTO sluice_lab.lock_acquire SELECT 'sabotage', lock, token, ttl_ms, expires_at, at"
                    + " FROM sluice_lab.lock_acquire ORDER BY expires_at DESC LIMIT 1");
            assertThat(LockChecker.check(c).failure()).contains("token_reuse 1");
            s.execute("ROLLBACK");
            s.execute("BEGIN");
            s.execute("INSERT INTO sluice_lab.lock_acquire SELECT 'sabotage', lock, 0, ttl_ms, expires_at + interval '1 hour', at"
                    + " FROM sluice_lab.lock_acquire ORDER BY expires_at DESC LIMIT 1");
            assertThat(LockChecker.check(c).failure()).contains("token_regressions 1");
            s.execute("ROLLBACK");
            assertThat(LockChecker.check(c).failure()).isNull();
        }
    }

    private static long scalar(Connection c, String sql) throws Exception {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
