package dev.sluice.internal.consume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.ConcurrencyPolicy;
import dev.sluice.ConsumeOptions;
import dev.sluice.Consumption;
import dev.sluice.GroupConfig;
import dev.sluice.Outcome;
import dev.sluice.Outgoing;
import dev.sluice.ProduceOptions;
import dev.sluice.ReadOptions;
import dev.sluice.Sluice;
import dev.sluice.StartPosition;
import dev.sluice.StreamConfig;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.internal.schema.FamilyTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A lagging group keeps many log partitions, and a claim whose ids come from the cursor or a lease cannot be pruned
 * by the planner: without a window it plans, opens and locks every partition (the hour-long lab run overflowed the
 * server's lock table with 718 of them). With the window's bounds bound as constants, a claim and a partitioned
 * group's fetch lock only the partitions the window spans, and the key checks only those of the ranges below them.
 * Counted in the server's lock table, inside the claim's own transaction. And consumers whose cursor outruns their
 * window (a long log, several consumers) still get every message exactly once.
 */
@SluiceTest
class LogWindowTest {
    private static final int PARTITION = 10;
    private static final int MESSAGES = 1_000;

    @Test
    void aRangeClaimLocksOnlyThePartitionsOfItsWindow(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            FamilyTables t = wideStream(sluice, db, "wide.range");
            sluice.stream("wide.range").consumerGroup("g").register();
            long gid = sluice.stream("wide.range").consumerGroup("g").get().orElseThrow().id();
            try (Connection c = db.connect()) {
                c.setAutoCommit(false);
                int all = partitions(c, t);
                assertThat(all).as("partitions of the log").isGreaterThanOrEqualTo(MESSAGES / PARTITION);
                // Unbounded, the claim locks every partition: the cost the window removes.
                assertThat(claim(c, t, gid, new LogWindow(0, Long.MAX_VALUE)).newClaimed).isEqualTo(10);
                assertThat(lockedPartitions(c, t)).as("partitions an unbounded claim locks").isEqualTo(all);
                c.rollback();
                Claim r = claim(c, t, gid, new LogWindow(0, 25));
                assertThat(r.ids).containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L);
                // ids (0, 25]: partitions 0, 1 and 2
                assertThat(lockedPartitions(c, t)).as("partitions a claim in (0, 25] locks").isLessThanOrEqualTo(3);
                c.commit();
                // A window the cursor has left claims nothing and names the cursor.
                Claim miss = claim(c, t, gid, new LogWindow(500, 525));
                assertThat(miss.leaseId).isZero();
                assertThat(miss.oldClaimed).isEqualTo(10);
                assertThat(miss.ids).isEmpty();
                c.commit();
                // The claim stops at the window's reach.
                Claim clipped = claim(c, t, gid, new LogWindow(10, 15));
                assertThat(clipped.ids).containsExactly(11L, 12L, 13L, 14L, 15L);
                c.commit();
            }
        }
    }

    @Test
    void aPartitionedFetchLocksOnlyThePartitionsOfItsWindowAndEndsThere(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            FamilyTables t = wideStream(sluice, db, "wide.part");
            sluice.stream("wide.part").consumerGroup("g").register(GroupConfig.builder().partitions(4).build());
            long gid = sluice.stream("wide.part").consumerGroup("g").get().orElseThrow().id();
            ConsumeSql sql = ConsumeSql.of(t);
            try (Connection c = db.connect()) {
                c.setAutoCommit(false);
                List<Long> ids = new ArrayList<>();
                try (PreparedStatement ps = c.prepareStatement(sql.partitionClaim)) {
                    ps.setString(1, sql.ranges.cursorLockKey(gid));
                    ps.setLong(2, gid);
                    PartitionSql.bindFetch(ps, 3, c, 4, new Integer[] {0, 1, 2, 3}, new Long[] {0L, 0L, 0L, 0L},
                            new LogWindow(0, 25), 100, ReadOptions.DEFAULT_MAX_BYTES, gid);
                    ps.execute();
                    assertThat(ps.getMoreResults()).isTrue();
                    assertThat(ps.getMoreResults()).isTrue();
                    try (ResultSet rs = ps.getResultSet()) {
                        while (rs.next()) {
                            assertThat(rs.getLong(1)).as("settled head").isGreaterThanOrEqualTo(MESSAGES);
                            rs.getLong(7);
                            if (!rs.wasNull()) {
                                ids.add(rs.getLong(7));
                            }
                        }
                    }
                }
                assertThat(ids).as("a batch of 100 in a window of 25 ids").hasSize(25).allMatch(id -> id <= 25);
                assertThat(lockedPartitions(c, t)).as("partitions a fetch in (0, 25] locks").isLessThanOrEqualTo(3);
                c.rollback();
            }
        }
    }

    @Test
    void theKeyChecksReadOnlyThePartitionsOfTheRangesBelowThemAndStillFindEveryEarlierMessage(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            long sid = sluice.stream("wide.keys").register(StreamConfig.builder().partitionSize(PARTITION).build()).id();
            List<Outgoing<String>> messages = new ArrayList<>();
            for (int i = 0; i < MESSAGES; i++) {
                messages.add(Outgoing.of("m" + i, ProduceOptions.builder().messageKey("k" + (i % 5)).build()));
            }
            sluice.stream("wide.keys", String.class).producer().produceBatch(messages);
            FamilyTables t = new FamilyTables("\"" + db.schema() + "\"", sid);
            // The group starts at 501: the log below it is 50 partitions the checks must not read.
            sluice.stream("wide.keys").consumerGroup("g").register(GroupConfig.builder().start(StartPosition.atId(501)).build());
            long gid = sluice.stream("wide.keys").consumerGroup("g").get().orElseThrow().id();
            KeyLeaseSql sql = ConsumeSql.of(t).keys;
            List<String> keys = List.of("k0", "k1", "k2", "k3", "k4");
            Long[] firsts = {521L, 522L, 523L, 524L, 525L}; // ids 521..525 carry k0..k4
            try (Connection c = db.connect()) {
                c.setAutoCommit(false);
                long a = claim(c, t, gid, new LogWindow(500, 600)).leaseId; // 501..510
                long b = claim(c, t, gid, new LogWindow(500, 600)).leaseId; // 511..520
                long own = claim(c, t, gid, new LogWindow(500, 600)).leaseId; // 521..530
                assertThat(List.of(a, b, own)).doesNotHaveDuplicates().doesNotContain(0L);
                c.commit();
                int all = partitions(c, t);
                assertThat(KeyedLeases.heldBack(c, sql, ConcurrencyPolicy.ORDERED, gid, own, keys, firsts))
                        .as("ordered: every key has unresolved messages in the ranges below").containsExactlyInAnyOrderElementsOf(keys);
                assertThat(lockedPartitions(c, t)).as("partitions the ordered check locks (of %d)", all).isLessThanOrEqualTo(4);
                c.rollback();
                // Resolved ids of a range hold nothing back.
                String lease = t.claimLease();
                execute(c, "UPDATE " + lease + " SET resolved = ARRAY(SELECT generate_series(low, high)) WHERE id IN (" + a + ", " + b + ")");
                c.commit();
                assertThat(KeyedLeases.heldBack(c, sql, ConcurrencyPolicy.ORDERED, gid, own, keys, firsts)).isEmpty();
                c.rollback();
                // An exception row below holds its key back.
                execute(c, "INSERT INTO " + t.exceptionQueue() + " (consumer_group_id, message_id, status, message_key, concurrency,"
                        + " attempts, can_run_after) VALUES (" + gid + ", 503, 'ready', 'k2', 'ordered', 1, now() - interval '1 second')");
                c.commit();
                assertThat(KeyedLeases.heldBack(c, sql, ConcurrencyPolicy.ORDERED, gid, own, keys, firsts)).containsExactly("k2");
                c.rollback();
                // exclusive: only expired ranges and due waiting rows go first.
                execute(c, "UPDATE " + lease + " SET resolved = '{}', expires_at = now() - interval '1 second' WHERE id = " + b);
                c.commit();
                assertThat(KeyedLeases.heldBack(c, sql, ConcurrencyPolicy.EXCLUSIVE, gid, -1, keys, firsts))
                        .as("exclusive: the expired range's keys and the due row's").containsExactlyInAnyOrderElementsOf(keys);
                assertThat(lockedPartitions(c, t)).as("partitions the exclusive check locks").isLessThanOrEqualTo(4);
                c.rollback();
                assertThat(KeyedLeases.heldBack(c, sql, ConcurrencyPolicy.EXCLUSIVE, gid, -1, keys, new Long[] {501L, 502L, 503L, 504L, 505L}))
                        .as("nothing below the first ids").isEmpty();
                c.rollback();
            }
        }
    }

    @Test
    void exceptionRowsCarryTheirPayloadSizeSoTheirClaimReadsNoLogPartition(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            FamilyTables t = wideStream(sluice, db, "wide.rows");
            sluice.stream("wide.rows").consumerGroup("g").register();
            long gid = sluice.stream("wide.rows").consumerGroup("g").get().orElseThrow().id();
            ExceptionSql sql = ConsumeSql.of(t).exceptions;
            long[] ids = {500, 501, 502, 503, 504};
            try (Connection c = db.connect()) {
                c.setAutoCommit(false);
                try (PreparedStatement ps = c.prepareStatement(sql.insertRows)) {
                    ps.setLong(1, gid);
                    ps.setString(2, "parallel");
                    ps.setArray(3, c.createArrayOf("int8", new Long[] {500L, 501L, 502L, 503L, 504L}));
                    ps.setArray(4, c.createArrayOf("text", new String[] {"ready", "ready", "ready", "ready", "ready"}));
                    ps.setArray(5, c.createArrayOf("text", new String[5]));
                    ps.setArray(6, c.createArrayOf("int4", new Integer[] {1, 1, 1, 1, 1}));
                    ps.setArray(7, c.createArrayOf("int4", new Integer[] {0, 0, 0, 0, 0}));
                    ps.setArray(8, c.createArrayOf("float8", new Double[] {0.0, 0.0, 0.0, 0.0, 0.0}));
                    ps.setArray(9, c.createArrayOf("text", new String[5]));
                    ps.setArray(10, c.createArrayOf("text", new String[5]));
                    ps.setLong(11, 500);
                    ps.setLong(12, 504);
                    assertThat(ps.executeUpdate()).isEqualTo(5);
                }
                assertThat(lockedPartitions(c, t)).as("partitions the row write locks (ids 500..504)").isLessThanOrEqualTo(1);
                c.commit();
                assertThat(count(c, "SELECT count(*) FROM " + t.exceptionQueue() + " e JOIN " + t.messageLog()
                        + " m ON m.id = e.message_id WHERE e.payload_bytes = octet_length(m.payload) AND e.payload_bytes > 0"))
                        .as("rows carrying their message's payload size").isEqualTo(ids.length);
                c.commit();
                int size = count(c, "SELECT payload_bytes FROM " + t.exceptionQueue() + " WHERE message_id = 500");
                for (ConcurrencyPolicy policy : ConcurrencyPolicy.values()) {
                    assertThat(claimRows(c, sql.claimRows(policy), gid, Long.MAX_VALUE)).as("%s: every due row", policy)
                            .containsExactly(500L, 501L, 502L, 503L, 504L);
                    assertThat(lockedPartitions(c, t)).as("%s: log partitions the row claim locks", policy).isZero();
                    c.rollback();
                }
                // The byte budget, from the rows: the first row always, then the rows that fit.
                assertThat(claimRows(c, sql.claimRows(ConcurrencyPolicy.PARALLEL), gid, 1)).containsExactly(500L);
                c.rollback();
                assertThat(claimRows(c, sql.claimRows(ConcurrencyPolicy.PARALLEL), gid, 2L * size)).containsExactly(500L, 501L);
                c.rollback();
            }
        }
    }

    @Test
    void consumersWhoseCursorOutrunsTheirWindowGetEveryMessageOnce(TestDatabase db) throws Exception {
        int n = (int) LogWindow.MIN_SPAN * 3;
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            sluice.stream("long").register(StreamConfig.builder().partitionSize(500).build());
            List<Outgoing<String>> batch = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                batch.add(Outgoing.of("m" + i, ProduceOptions.builder().messageKey("k" + (i % 7)).build()));
            }
            sluice.stream("long", String.class).producer().produceBatch(batch);
            for (GroupConfig config : List.of(GroupConfig.builder().build(), GroupConfig.builder().partitions(4).build())) {
                String name = config.partitions() > 0 ? "part" : "ranges";
                var group = sluice.stream("long", String.class).consumerGroup(name);
                group.register(config);
                Map<Long, AtomicInteger> seen = new ConcurrentHashMap<>();
                ConsumeOptions opts = ConsumeOptions.defaults().withBatchSize(50).withPollInterval(Duration.ofMillis(20));
                try (Consumption a = group.consume(m -> {
                    seen.computeIfAbsent(m.id(), k -> new AtomicInteger()).incrementAndGet();
                    return Outcome.success();
                }, opts); Consumption b = group.consume(m -> {
                    seen.computeIfAbsent(m.id(), k -> new AtomicInteger()).incrementAndGet();
                    return Outcome.success();
                }, opts)) {
                    await().atMost(Duration.ofSeconds(60)).until(() -> seen.size() == n);
                }
                assertThat(seen.keySet()).as("%s: every message", name).hasSize(n).allMatch(id -> id >= 1 && id <= n);
                assertThat(seen.values()).as("%s: each once", name).allMatch(count -> count.get() == 1);
            }
        }
    }

    private static FamilyTables wideStream(Sluice sluice, TestDatabase db, String name) {
        long sid = sluice.stream(name).register(StreamConfig.builder().partitionSize(PARTITION).build()).id();
        List<Outgoing<String>> messages = new ArrayList<>();
        for (int i = 0; i < MESSAGES; i++) {
            messages.add(Outgoing.of("m" + i));
        }
        sluice.stream(name, String.class).producer().produceBatch(messages);
        return new FamilyTables("\"" + db.schema() + "\"", sid);
    }

    private record Claim(long oldClaimed, long newClaimed, long leaseId, List<Long> ids) {
    }

    private static Claim claim(Connection c, FamilyTables t, long gid, LogWindow w) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(ConsumeSql.of(t).ranges.claim)) {
            ConsumeSql.of(t).ranges.bindClaim(ps, gid, 10, ReadOptions.DEFAULT_MAX_BYTES, UUID.randomUUID(), 30, w);
            ps.execute();
            assertThat(ps.getMoreResults()).isTrue();
            try (ResultSet rs = ps.getResultSet()) {
                long old = 0;
                long claimed = 0;
                long lease = 0;
                List<Long> ids = new ArrayList<>();
                while (rs.next()) {
                    old = rs.getLong(1);
                    claimed = rs.getLong(2);
                    lease = rs.getLong(4);
                    rs.getLong(8);
                    if (!rs.wasNull()) {
                        ids.add(rs.getLong(8));
                    }
                }
                return new Claim(old, claimed, lease, ids);
            }
        }
    }

    private static List<Long> claimRows(Connection c, String sql, long gid, long maxBytes) throws SQLException {
        List<Long> ids = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ExceptionSql.bindClaimRows(ps, gid, 10, 5, true, UUID.randomUUID(), 30, maxBytes);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    ids.add(rs.getLong(1));
                }
            }
        }
        ids.sort(null);
        return ids;
    }

    private static void execute(Connection c, String sql) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.execute();
        }
    }

    private static int partitions(Connection c, FamilyTables t) throws SQLException {
        return count(c, "SELECT count(*) FROM pg_inherits WHERE inhparent = '" + t.messageLog() + "'::regclass");
    }

    /** The log's partitions this session's transaction holds a lock on. */
    private static int lockedPartitions(Connection c, FamilyTables t) throws SQLException {
        return count(c, "SELECT count(DISTINCT l.relation) FROM pg_locks l JOIN pg_inherits i ON i.inhrelid = l.relation"
                + " WHERE l.pid = pg_backend_pid() AND l.locktype = 'relation' AND i.inhparent = '" + t.messageLog() + "'::regclass");
    }

    private static int count(Connection c, String sql) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql); ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getInt(1);
        }
    }
}
