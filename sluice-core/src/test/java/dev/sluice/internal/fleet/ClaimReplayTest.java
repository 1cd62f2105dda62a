package dev.sluice.internal.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.internal.jdbc.Identifiers;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The claim statement run again under the same token, as {@link Instances} does after a commit whose reply was lost:
 * it finds the row the first run made, and does not count that row as an instance before itself (which would make a
 * capped worker's only instance a standby of itself until the next heartbeat).
 */
@SluiceTest
class ClaimReplayTest {

    @Test
    void aClaimRunAgainUnderItsTokenRenewsItsOwnRowAndStaysFirst(TestDatabase db) throws SQLException {
        String key = "consumer:claim.replay/g";
        try (Sluice admin = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).maintenance(false).build()) {
            admin.stream("claim.replay").register();
            admin.stream("claim.replay").consumerGroup("g").register();
            admin.fleet().setTarget(key, 1);
        }
        WorkerSql sql = new WorkerSql(Identifiers.quote(db.schema()));
        try (Connection c = db.connect()) {
            long worker = scalar(c, "SELECT w.id FROM " + Identifiers.quote(db.schema()) + ".worker_config w"
                    + " WHERE w.target_instances = 1");
            UUID mine = UUID.randomUUID();
            long[] first = claim(c, sql, worker, mine);
            long[] again = claim(c, sql, worker, mine);
            assertThat(again[0]).as("the same row").isEqualTo(first[0]);
            assertThat(first[1]).as("target").isEqualTo(1);
            assertThat(first[2]).as("instances before the first claim").isZero();
            assertThat(again[2]).as("instances before the replayed claim: its own row is not one").isZero();
            assertThat(scalar(c, "SELECT count(*) FROM " + Identifiers.quote(db.schema()) + ".worker_instance")).isEqualTo(1);
            // Another process's claim still comes after it: a standby.
            long[] other = claim(c, sql, worker, UUID.randomUUID());
            assertThat(other[0]).isGreaterThan(first[0]);
            assertThat(other[2]).isEqualTo(1);
            // And the first, replayed once more, still has nobody before it.
            assertThat(claim(c, sql, worker, mine)[2]).isZero();
        }
    }

    /** Runs the claim as {@link Instances} does; returns id, target and the instances before it. */
    private static long[] claim(Connection c, WorkerSql sql, long worker, UUID token) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql.claim)) {
            ps.setLong(1, worker);
            ps.setObject(2, token);
            ps.setString(3, "proc");
            ps.setInt(4, 0);
            ps.setDouble(5, 30);
            try (ResultSet rs = ps.executeQuery()) {
                assertThat(rs.next()).isTrue();
                return new long[] {rs.getLong(1), rs.getInt(3), rs.getLong(4)};
            }
        }
    }

    private static long scalar(Connection c, String q) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(q); ResultSet rs = ps.executeQuery()) {
            assertThat(rs.next()).isTrue();
            return rs.getLong(1);
        }
    }
}
