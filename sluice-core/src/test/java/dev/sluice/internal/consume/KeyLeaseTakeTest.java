package dev.sluice.internal.consume;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.GroupConfig;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.internal.schema.FamilyTables;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * A take of key leases locks no row another holder keeps: while one consumer's take is still open (its key checks and
 * its commit follow in the same transaction), the holder of a key it met renews and releases without waiting. Before,
 * the take's {@code ON CONFLICT DO UPDATE … WHERE expired} locked every held row it met, and under load renewals and
 * releases queued behind other consumers' takes.
 */
@SluiceTest
class KeyLeaseTakeTest {

    @Test
    void aTakeSkipsHeldKeysWithoutLockingThemAndStillTakesFreeAndExpiredOnes(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).maintenance(false).build()) {
            long sid = sluice.stream("keys.take").register().id();
            sluice.stream("keys.take").consumerGroup("g").register(GroupConfig.builder()
                    .concurrency(dev.sluice.ConcurrencyPolicy.ORDERED).build());
            long gid = sluice.stream("keys.take").consumerGroup("g").get().orElseThrow().id();
            FamilyTables t = new FamilyTables("\"" + db.schema() + "\"", sid);
            KeyLeaseSql sql = ConsumeSql.of(t).keys;
            UUID a = UUID.randomUUID();
            UUID b = UUID.randomUUID();
            try (Connection ca = db.connect(); Connection cb = db.connect(); Connection other = db.connect()) {
                assertThat(take(ca, sql, gid, a, "held")).containsExactly("held");
                // A key whose holder died: its lease ran out (renewing it would wait for b's take, which is right).
                assertThat(take(other, sql, gid, UUID.randomUUID(), "stale")).containsExactly("stale");
                execute(other, "UPDATE " + t.messageKeyLease() + " SET expires_at = now() - interval '1 second'"
                        + " WHERE message_key = 'stale'");
                cb.setAutoCommit(false);
                // b's take, still open: the held key is left to a, the expired and the free one are b's.
                assertThat(take(cb, sql, gid, b, "free", "held", "stale")).containsExactlyInAnyOrder("free", "stale");
                execute(other, "SET lock_timeout = '200ms'");
                // a's row is not locked by b's open take: the holder's renewal and release go through at once.
                try (PreparedStatement ps = other.prepareStatement("SELECT message_key FROM " + t.messageKeyLease()
                        + " WHERE consumer_group_id = ? AND message_key = 'held' FOR UPDATE NOWAIT")) {
                    ps.setLong(1, gid);
                    try (ResultSet rs = ps.executeQuery()) {
                        assertThat(rs.next()).as("a's held key, unlocked").isTrue();
                    }
                }
                try (PreparedStatement ps = ca.prepareStatement(sql.renewKeys)) {
                    ps.setLong(1, gid);
                    ps.setObject(2, a);
                    ps.setDouble(3, 30);
                    execute(ca, "SET lock_timeout = '200ms'");
                    assertThat(ps.executeUpdate()).as("a renews the key it still holds").isEqualTo(1);
                }
                cb.commit();
                assertThat(owner(other, t, gid, "held")).isEqualTo(a);
                assertThat(owner(other, t, gid, "stale")).isEqualTo(b);
                assertThat(owner(other, t, gid, "free")).isEqualTo(b);
            }
        }
    }

    private static List<String> take(Connection c, KeyLeaseSql sql, long group, UUID owner, String... keys) throws SQLException {
        Long[] ids = new Long[keys.length];
        for (int i = 0; i < keys.length; i++) {
            ids[i] = 10L + i;
        }
        List<String> taken = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(sql.acquireKeys)) {
            ps.setLong(1, group);
            ps.setObject(2, owner);
            ps.setDouble(3, 30);
            ps.setArray(4, c.createArrayOf("text", keys));
            ps.setArray(5, c.createArrayOf("int8", ids));
            ps.setLong(6, group);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    taken.add(rs.getString(1));
                }
            }
        }
        return taken;
    }

    private static UUID owner(Connection c, FamilyTables t, long group, String key) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT owner_token FROM " + t.messageKeyLease()
                + " WHERE consumer_group_id = ? AND message_key = ?")) {
            ps.setLong(1, group);
            ps.setString(2, key);
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).isTrue();
                return rs.getObject(1, UUID.class);
            }
        }
    }

    private static void execute(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }
}
