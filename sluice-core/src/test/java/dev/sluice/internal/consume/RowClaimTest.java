package dev.sluice.internal.consume;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.ConcurrencyPolicy;
import dev.sluice.GroupConfig;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.internal.schema.FamilyTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Which exception rows a claim takes per policy: for keyed policies only rows that can run now, so
 * same-key rows never churn through claim-block-defer cycles (the lab found that, under a backlog of
 * deferred rows, this churn buried the one row per key that could make progress).
 */
@SluiceTest
class RowClaimTest {

    @Test
    void keyedPoliciesClaimOnlyRowsThatCanRun(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            long sid = sluice.stream("rows").register().id();
            FamilyTables t = new FamilyTables("\"" + db.schema() + "\"", sid);
            for (ConcurrencyPolicy policy : ConcurrencyPolicy.values()) {
                String name = policy.name().toLowerCase();
                sluice.stream("rows").consumerGroup(name).register(GroupConfig.builder().concurrency(policy).build());
                long gid = sluice.stream("rows").consumerGroup(name).get().orElseThrow().id();
                try (Connection c = db.connect()) {
                    // Key a: 10 retrying (due later), 11 and 12 deferred behind it (due now).
                    // Key b: 20 and 21 deferred, both due. Key c: 30 in flight, 31 deferred (due).
                    // Keyless: 40 and 41 ready and due.
                    row(c, t, gid, 10, "ready", "a", "now() + interval '1 hour'");
                    row(c, t, gid, 11, "deferred", "a", "now() - interval '1 second'");
                    row(c, t, gid, 12, "deferred", "a", "now() - interval '2 seconds'");
                    row(c, t, gid, 20, "deferred", "b", "now() - interval '1 second'");
                    row(c, t, gid, 21, "deferred", "b", "now() - interval '3 seconds'");
                    row(c, t, gid, 30, "inflight", "c", "now() - interval '1 second'");
                    row(c, t, gid, 31, "deferred", "c", "now() - interval '1 second'");
                    row(c, t, gid, 40, "ready", null, "now() - interval '1 second'");
                    row(c, t, gid, 41, "ready", null, "now() - interval '1 second'");
                    List<Long> claimed = claim(c, t, gid, policy);
                    switch (policy) {
                        // Every due row.
                        case PARALLEL -> assertThat(claimed).containsExactlyInAnyOrder(11L, 12L, 20L, 21L, 31L, 40L, 41L);
                        // Only the lowest unresolved row of each key, and only when it is due: a waits for 10, c for 30.
                        case ORDERED -> assertThat(claimed).containsExactlyInAnyOrder(20L, 40L, 41L);
                        // One due row per key, none of a key in flight.
                        case EXCLUSIVE -> assertThat(claimed).containsExactlyInAnyOrder(11L, 20L, 40L, 41L);
                    }
                }
            }
        }
    }

    @Test
    void exclusiveFreshChainsYieldToEarlierDueRowsOfTheirKey(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            long sid = sluice.stream("yield").register().id();
            FamilyTables t = new FamilyTables("\"" + db.schema() + "\"", sid);
            sluice.stream("yield").consumerGroup("x").register(GroupConfig.builder().concurrency(ConcurrencyPolicy.EXCLUSIVE).build());
            long gid = sluice.stream("yield").consumerGroup("x").get().orElseThrow().id();
            try (Connection c = db.connect()) {
                row(c, t, gid, 10, "deferred", "a", "now() - interval '1 second'"); // due, waiting: a yields
                row(c, t, gid, 20, "deferred", "b", "now() + interval '1 hour'");   // backing off: b does not
                row(c, t, gid, 30, "inflight", "c", "now() - interval '1 second'"); // running: the key lease decides
                row(c, t, gid, 90, "ready", "d", "now() - interval '1 second'");    // later than the chain: d does not
                // Messages 1-3 (keys e, f, g) in ranges: e's holder died (lease expired): e yields, so the
                // takeover finds its key free; f's range is held (its holder has or waits for the key); g's
                // range expired but g was resolved there.
                dev.sluice.Producer<String> p = sluice.stream("yield", String.class).producer();
                for (String key : List.of("e", "f", "g")) {
                    p.produce("m", dev.sluice.ProduceOptions.builder().messageKey(key).build());
                }
                lease(c, t, gid, 1, "now() - interval '1 second'", "{}");
                lease(c, t, gid, 2, "now() + interval '1 minute'", "{}");
                lease(c, t, gid, 3, "now() - interval '1 second'", "{3}");
                c.setAutoCommit(false);
                java.util.Set<String> waiting = KeyedLeases.heldBack(c, ConsumeSql.of(t).keys, ConcurrencyPolicy.EXCLUSIVE, gid, -1,
                        List.of("a", "b", "c", "d", "e", "f", "g", "h"), new Long[] {50L, 50L, 50L, 50L, 50L, 50L, 50L, 50L});
                c.rollback();
                assertThat(waiting).containsExactlyInAnyOrder("a", "e");
            }
        }
    }

    /**
     * The fresh-range claim is two statements in one implicit transaction: its transaction-local settings
     * (the observed head, {@code synchronous_commit = off}) must end with it, never leak into the pooled
     * connection's next transaction — a leak would make the caller's own commits asynchronous.
     */
    @Test
    void theClaimsTransactionLocalSettingsDoNotOutliveIt(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            long sid = sluice.stream("claims").register().id();
            FamilyTables t = new FamilyTables("\"" + db.schema() + "\"", sid);
            sluice.stream("claims").consumerGroup("g").register();
            long gid = sluice.stream("claims").consumerGroup("g").get().orElseThrow().id();
            sluice.stream("claims").producer().produce("m1".getBytes(java.nio.charset.StandardCharsets.UTF_8));
            try (Connection c = db.connect()) {
                c.setAutoCommit(true);
                long leaseId;
                try (PreparedStatement ps = c.prepareStatement(ConsumeSql.of(t).ranges.claim)) {
                    ConsumeSql.of(t).ranges.bindClaim(ps, gid, 10, dev.sluice.ReadOptions.DEFAULT_MAX_BYTES, UUID.randomUUID(), 30, new LogWindow(0, Long.MAX_VALUE));
                    ps.execute();
                    assertThat(ps.getMoreResults()).isTrue();
                    try (ResultSet rs = ps.getResultSet()) {
                        assertThat(rs.next()).isTrue();
                        assertThat(rs.getLong(2)).as("new claimed").isEqualTo(1);
                        leaseId = rs.getLong(4);
                        assertThat(rs.getLong(8)).as("the message comes with the claim").isEqualTo(1);
                    }
                }
                assertThat(leaseId).isPositive();
                try (PreparedStatement ps = c.prepareStatement("SELECT current_setting('synchronous_commit'),"
                        + " coalesce(current_setting('sluice.observed_head', true), '')");
                     ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    assertThat(rs.getString(1)).isEqualTo("on");
                    assertThat(rs.getString(2)).isEmpty();
                }
                // The claim committed: another connection sees the lease.
                try (Connection other = db.connect(); PreparedStatement ps = other.prepareStatement(
                        "SELECT count(*) FROM " + t.claimLease() + " WHERE id = ?")) {
                    ps.setLong(1, leaseId);
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        assertThat(rs.getLong(1)).isEqualTo(1);
                    }
                }
            }
        }
    }

    @Test
    void anExpiredRowWithoutAttemptsLeftGoesDeadInTheClaimAndEveryExpiryIsLogged(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            long sid = sluice.stream("spent").register().id();
            FamilyTables t = new FamilyTables("\"" + db.schema() + "\"", sid);
            long gid = sluice.stream("spent").consumerGroup("g").register().id();
            try (Connection c = db.connect()) {
                // 50: its 2nd delivery's lease ran out (budget 2 used); 51: its 1st ran out; 52: 2nd, lease live.
                for (long id : new long[] {50, 51, 52}) {
                    row(c, t, gid, id, "inflight", null, "now()");
                }
                execute(c, "UPDATE " + t.exceptionQueue() + " SET attempts = 2, lease_expires_at = now() - interval '1 second'"
                        + " WHERE message_id = 50");
                execute(c, "UPDATE " + t.exceptionQueue() + " SET attempts = 1, lease_expires_at = now() - interval '1 second'"
                        + " WHERE message_id = 51");
                execute(c, "UPDATE " + t.exceptionQueue() + " SET attempts = 2 WHERE message_id = 52");
                List<Long> claimed = new ArrayList<>();
                try (PreparedStatement ps = c.prepareStatement(ConsumeSql.of(t).exceptions.claimRows(ConcurrencyPolicy.PARALLEL))) {
                    ExceptionSql.bindClaimRows(ps, gid, 100, 2, true, UUID.randomUUID(), 30, Long.MAX_VALUE);
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            claimed.add(rs.getLong(1));
                            assertThat(rs.getInt(2)).as("attempt of the re-claimed row").isEqualTo(2);
                        }
                    }
                }
                assertThat(claimed).containsExactly(51L);
                assertThat(strings(c, "SELECT message_id || ' ' || status || ' ' || attempts || ' ' || coalesce(last_error, '-')"
                        + " || ' ' || (dead_at IS NOT NULL) || ' ' || (lease_owner IS NULL) FROM " + t.exceptionQueue() + " ORDER BY message_id"))
                        .containsExactly("50 dead 2 expired: the lease of delivery 2 of 2 ran out before its handler finished true true",
                                "51 inflight 2 - false false", "52 inflight 2 - false false");
                assertThat(strings(c, "SELECT message_id || ' ' || attempt || ' ' || status || ' ' || error FROM " + t.deliveryLog()
                        + " ORDER BY message_id")).containsExactly(
                        "50 2 dead expired: the lease of delivery 2 of 2 ran out before its handler finished",
                        "51 1 expired the lease of delivery 1 of 2 ran out before its handler finished");
            }
        }
    }

    @Test
    void aRowClaimStopsAtTheByteBudgetAndTakesTheRestNextTime(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            long sid = sluice.stream("budget").register().id();
            FamilyTables t = new FamilyTables("\"" + db.schema() + "\"", sid);
            long gid = sluice.stream("budget").consumerGroup("g").register().id();
            List<Long> ids = new ArrayList<>();
            try (dev.sluice.Producer<byte[]> p = sluice.stream("budget").producer()) {
                for (int size : new int[] {6000, 1000, 1000, 1000, 1000, 1000}) {
                    ids.add(p.produce(new byte[size]).id());
                }
            }
            try (Connection c = db.connect()) {
                for (long id : ids) {
                    row(c, t, gid, id, "ready", null, "now() - interval '1 second'");
                }
                // A 2500-byte budget: the 6000-byte payload alone, then two 1000-byte ones at a time.
                List<List<Long>> claims = new ArrayList<>();
                for (int i = 0; i < 5; i++) {
                    List<Long> claimed = new ArrayList<>();
                    try (PreparedStatement ps = c.prepareStatement(ConsumeSql.of(t).exceptions.claimRows(ConcurrencyPolicy.PARALLEL))) {
                        ExceptionSql.bindClaimRows(ps, gid, 100, 5, true, UUID.randomUUID(), 30, 2500);
                        try (ResultSet rs = ps.executeQuery()) {
                            while (rs.next()) {
                                claimed.add(rs.getLong(1));
                            }
                        }
                    }
                    claimed.sort(null);
                    claims.add(claimed);
                }
                assertThat(claims).containsExactly(List.of(ids.get(0)), List.of(ids.get(1), ids.get(2)),
                        List.of(ids.get(3), ids.get(4)), List.of(ids.get(5)), List.of());
                assertThat(strings(c, "SELECT DISTINCT status || ' ' || attempts FROM " + t.exceptionQueue()))
                        .as("every row claimed exactly once").containsExactly("inflight 1");
            }
        }
    }

    private static void execute(Connection c, String sql) throws Exception {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.executeUpdate();
        }
    }

    private static List<String> strings(Connection c, String sql) throws Exception {
        List<String> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(sql); ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                out.add(rs.getString(1));
            }
        }
        return out;
    }

    private static void lease(Connection c, FamilyTables t, long gid, long id, String expires, String resolved) throws Exception {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + t.claimLease() + " (consumer_group_id, low, high,"
                + " owner_token, expires_at, resolved) VALUES (?, ?, ?, ?, " + expires + ", ?::bigint[])")) {
            ps.setLong(1, gid);
            ps.setLong(2, id);
            ps.setLong(3, id);
            ps.setObject(4, UUID.randomUUID());
            ps.setString(5, resolved);
            ps.executeUpdate();
        }
    }

    private static void row(Connection c, FamilyTables t, long gid, long id, String status, String key, String due) throws Exception {
        String lease = status.equals("inflight") ? "'" + UUID.randomUUID() + "', now() + interval '1 minute'" : "NULL, NULL";
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + t.exceptionQueue()
                + " (consumer_group_id, message_id, status, message_key, concurrency, attempts, can_run_after, lease_owner,"
                + " lease_expires_at, payload_bytes) VALUES (?, ?, ?, ?, 'parallel', 0, " + due + ", " + lease + ","
                + " coalesce((SELECT octet_length(payload) FROM " + t.messageLog() + " WHERE id = ?), 0))")) {
            ps.setLong(1, gid);
            ps.setLong(2, id);
            ps.setString(3, status);
            ps.setString(4, key);
            ps.setLong(5, id);
            ps.executeUpdate();
        }
    }

    private static List<Long> claim(Connection c, FamilyTables t, long gid, ConcurrencyPolicy policy) throws Exception {
        List<Long> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(ConsumeSql.of(t).exceptions.claimRows(policy))) {
            ExceptionSql.bindClaimRows(ps, gid, 100, 5, true, UUID.randomUUID(), 30, Long.MAX_VALUE);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(rs.getLong(1));
                }
            }
        }
        return out;
    }
}
