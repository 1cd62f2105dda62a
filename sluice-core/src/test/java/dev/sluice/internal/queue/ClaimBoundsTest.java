package dev.sluice.internal.queue;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.EnqueueOptions;
import dev.sluice.NewJob;
import dev.sluice.Queue;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.internal.jdbc.Db;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The worker's claim bounds ({@link ClaimHints}): where they start the scan, when they are dropped, that a
 * bounded claim leaves the jobs below its bound alone and an unbounded one takes them, and that a bound
 * actually spares the claim the index pages of drained jobs (the reason it exists).
 */
@SluiceTest
class ClaimBoundsTest {

    // ------------------------------------------------------------------ the hints (no database)

    @Test
    void boundsStartBelowTheFirstJobEachPriorityGaveAndAShortClaimDropsThem() {
        AtomicLong clock = new AtomicLong(1_000_000_000L);
        ClaimHints hints = new ClaimHints(clock::get);
        assertThat(hints.next().unbounded()).as("the first claim scans everything").isTrue();

        Instant t = Instant.parse("2026-01-01T00:00:00Z");
        hints.claimed(List.of(claimed(1, 5, t.plusMillis(300)), claimed(2, 5, t.plusMillis(100)), claimed(3, 0, t.plusSeconds(9))), 3);
        assertThat(bounds(hints.next())).containsExactlyInAnyOrderEntriesOf(Map.of(
                5, JobStore.micros(t.plusMillis(100)) - ClaimHints.SLACK_MICROS,
                0, JobStore.micros(t.plusSeconds(9)) - ClaimHints.SLACK_MICROS));

        // A full claim of priority 5 only moves that bound; priority 0 keeps its own.
        hints.claimed(List.of(claimed(4, 5, t.plusSeconds(20))), 1);
        assertThat(bounds(hints.next())).containsEntry(5, JobStore.micros(t.plusSeconds(20)) - ClaimHints.SLACK_MICROS)
                .containsEntry(0, JobStore.micros(t.plusSeconds(9)) - ClaimHints.SLACK_MICROS);

        // A short claim: the bounded range ran dry, so whatever lies below is looked for next.
        hints.claimed(List.of(claimed(5, 5, t.plusSeconds(21))), 2);
        assertThat(hints.next().unbounded()).isTrue();

        hints.claimed(List.of(claimed(6, 5, t.plusSeconds(22))), 1);
        assertThat(hints.next().unbounded()).isFalse();
        hints.reset();
        assertThat(hints.next().unbounded()).as("after claims were given back").isTrue();
    }

    @Test
    void anUnboundedClaimComesAtLeastEveryFullScanInterval() {
        AtomicLong clock = new AtomicLong(0);
        ClaimHints hints = new ClaimHints(clock::get);
        Instant t = Instant.parse("2026-01-01T00:00:00Z");
        assertThat(hints.next().unbounded()).isTrue();
        int bounded = 0;
        int unbounded = 0;
        // A busy worker: every claim comes back full, one every 10 ms, for 3 s.
        for (int i = 0; i < 300; i++) {
            hints.claimed(List.of(claimed(i, 0, t.plusMillis(i))), 1);
            clock.addAndGet(10_000_000L);
            if (hints.next().unbounded()) {
                unbounded++;
            } else {
                bounded++;
            }
        }
        long expected = 3_000_000_000L / ClaimHints.FULL_SCAN_NANOS;
        assertThat(unbounded).isBetween((int) expected - 1, (int) expected + 1);
        assertThat(bounded).isEqualTo(300 - unbounded);
    }

    // ------------------------------------------------------------------ the claim statement

    @Test
    void aBoundedClaimLeavesJobsBelowItsBoundAndOtherPrioritiesAlone(TestDatabase db) {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            sluice.system().register();
            Queue<String> q = sluice.queue("bounded", String.class);
            Instant t0 = Instant.now().minusSeconds(60);
            long old = q.enqueue("old", EnqueueOptions.builder().runAt(t0).build());
            long recent = q.enqueue("recent", EnqueueOptions.builder().runAt(t0.plusSeconds(30)).build());
            long urgent = q.enqueue("urgent", EnqueueOptions.builder().priority(7).runAt(t0).build());
            JobStore store = new JobStore(new Db(db.dataSource()), db.schema());

            ClaimHints.Bounds bounds = new ClaimHints.Bounds(new int[] {0}, new long[] {JobStore.micros(t0.plusSeconds(10))});
            List<Long> first = ids(store.claim("bounded", 10, "w", bounds));
            assertThat(first).as("priority 7 has no bound; priority 0 only from its bound").containsExactly(urgent, recent);

            assertThat(ids(store.claim("bounded", 10, "w", ClaimHints.Bounds.NONE))).containsExactly(old);
            assertThat(store.claim("bounded", 10, "w")).isEmpty();
        }
    }

    @Test
    void aBoundSparesTheClaimTheIndexPagesOfDrainedJobs(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            sluice.system().register();
            String table = "\"" + db.schema() + "\".job";
            try (Connection c = db.connect(); Statement s = c.createStatement()) {
                // Nothing may clean the index behind the test's back.
                s.execute("ALTER TABLE " + table + " SET (autovacuum_enabled = false)");
            }
            Queue<byte[]> q = sluice.queue("drained");
            JobStore store = new JobStore(new Db(db.dataSource()), db.schema());
            List<NewJob<byte[]>> batch = new ArrayList<>();
            for (int i = 0; i < 1_000; i++) {
                batch.add(NewJob.of(new byte[100]));
            }
            for (int i = 0; i < 20; i++) {
                q.enqueueBatch(batch);
            }
            // Drain all 20,000: their entries stay in job_claim_idx (dead) until a VACUUM.
            for (List<JobStore.Claimed> got; !(got = store.claim("drained", 1_000, "w")).isEmpty(); ) {
                store.ackAll(got.stream().mapToLong(JobStore.Claimed::id).toArray(),
                        got.stream().map(JobStore.Claimed::token).toArray(UUID[]::new));
            }
            Thread.sleep(20);
            q.enqueueBatch(batch.subList(0, 100));
            Instant firstFresh;
            try (Connection c = db.connect(); Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT min(run_at), count(*) FROM " + table + " WHERE queue = 'drained'")) {
                rs.next();
                firstFresh = rs.getTimestamp(1).toInstant();
                assertThat(rs.getLong(2)).as("only the fresh jobs are left").isEqualTo(100);
            }
            ClaimHints.Bounds bound = new ClaimHints.Bounds(new int[] {0},
                    new long[] {JobStore.micros(firstFresh) - ClaimHints.SLACK_MICROS});

            long[] unbounded = claimIndexPages(db, store, ClaimHints.Bounds.NONE);
            long[] bounded = claimIndexPages(db, store, bound);
            // 20,000 dead entries fill about a hundred leaf pages; the bound descends straight past them.
            assertThat(unbounded[0]).as("pages the unbounded claim's index scan touched").isGreaterThan(50);
            assertThat(bounded[0]).as("pages the bounded claim's index scan touched").isLessThan(10);
            // The priorities' skip scan lands on each priority's newest entries, so it never walks them either.
            assertThat(unbounded[1]).as("pages the priority probes touched").isLessThan(10);
            assertThat(bounded[1]).as("pages the priority probes touched").isLessThan(10);
        }
    }

    /**
     * Runs the claim statement under EXPLAIN (ANALYZE, BUFFERS) in a transaction rolled back; the pages its
     * scan of job_claim_idx touched, and those its priority probes touched.
     */
    private static long[] claimIndexPages(TestDatabase db, JobStore store, ClaimHints.Bounds bounds) throws Exception {
        QueueSql sql = new QueueSql(db.schema());
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql.claim)) {
                ps.setString(1, "drained");
                ps.setString(2, "drained");
                ps.setObject(3, bounds.priorities());
                ps.setObject(4, bounds.fromMicros());
                ps.setString(5, "drained");
                ps.setInt(6, 50);
                ps.setInt(7, 50);
                ps.setString(8, "w");
                ps.setObject(9, UUID.randomUUID());
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    JsonNode plan = new ObjectMapper().readTree(rs.getString(1)).get(0).get("Plan");
                    List<JsonNode> scans = new ArrayList<>();
                    List<JsonNode> probes = new ArrayList<>();
                    collect(plan, scans, probes);
                    assertThat(scans).as("the claim's scan of job_claim_idx in " + plan).hasSize(1);
                    assertThat(probes).as("the priority probes in " + plan).hasSize(2);
                    JsonNode scan = scans.get(0);
                    assertThat(scan.get("Actual Rows").asLong()).isEqualTo(50);
                    return new long[] {pages(scan), pages(probes.get(0)) + pages(probes.get(1))};
                }
            } finally {
                c.rollback();
            }
        }
    }

    /** The plan nodes that scan job_claim_idx: the claim's (by run_at) and the priorities' probes. */
    private static void collect(JsonNode node, List<JsonNode> scans, List<JsonNode> probes) {
        if ("job_claim_idx".equals(node.path("Index Name").asText())) {
            (node.path("Index Cond").asText().contains("run_at") ? scans : probes).add(node);
        }
        for (JsonNode child : node.path("Plans")) {
            collect(child, scans, probes);
        }
    }

    private static long pages(JsonNode node) {
        return node.get("Shared Hit Blocks").asLong() + node.get("Shared Read Blocks").asLong();
    }

    private static Map<Integer, Long> bounds(ClaimHints.Bounds b) {
        Map<Integer, Long> m = new java.util.HashMap<>();
        for (int i = 0; i < b.priorities().length; i++) {
            m.put(b.priorities()[i], b.fromMicros()[i]);
        }
        return m;
    }

    private static List<Long> ids(List<JobStore.Claimed> claimed) {
        return claimed.stream().map(JobStore.Claimed::id).collect(Collectors.toList());
    }

    private static JobStore.Claimed claimed(long id, int priority, Instant runAt) {
        return new JobStore.Claimed(id, "q", new byte[0], "application/octet-stream", Map.of(), priority, runAt, 1, 5,
                30_000_000_000L, UUID.randomUUID(), runAt.plusSeconds(30), null, runAt, false);
    }
}
