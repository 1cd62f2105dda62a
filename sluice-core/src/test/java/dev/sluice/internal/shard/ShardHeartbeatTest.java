package dev.sluice.internal.shard;

import static dev.sluice.internal.shard.ShardFixture.group;
import static dev.sluice.internal.shard.ShardFixture.scalar;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.jdbc.Identifiers;
import dev.sluice.internal.shard.ShardFixture.Proc;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The cost of the shard heartbeat: one statement per process for every member of every group, using the owner index. */
@SluiceTest
class ShardHeartbeatTest {
    static Sluice admin;
    static Shards shards;
    static Db db;

    @BeforeAll
    static void setUp(TestDatabase t) {
        admin = ShardFixture.admin(t);
        shards = new Shards(t.schema());
        db = new Db(t.dataSource());
    }

    @AfterAll
    static void tearDown() {
        admin.close();
    }

    static void declare(long groupId, int count) {
        ShardFixture.declare(db, shards, groupId, count);
    }

    @Test
    void oneHeartbeatStatementRenewsEveryMemberOfEveryGroupOfTheProcess(TestDatabase t) {
        String renew = ShardSql.of(Identifiers.quote(t.schema())).renew;
        List<Long> groups = new ArrayList<>();
        try (Proc p = new Proc(t, "beat", false)) {
            List<ShardMember> members = new ArrayList<>();
            for (int g = 0; g < 3; g++) {
                long gid = group(admin, "shard.beat", "g" + g);
                groups.add(gid);
                declare(gid, 4);
                members.add(p.member("shard.beat", "g" + g, gid, 4));
                members.add(p.member("shard.beat", "g" + g, gid, 4));
            }
            for (ShardMember m : members) {
                m.step();
            }
            assertThat(members).allSatisfy(m -> assertThat(m.held()).hasSize(2));

            // From here on only heartbeats run: every statement the shard leases send is the renewal, one per beat.
            long beats = p.leases.heartbeats();
            int statements = p.counted.statements.size();
            await().atMost(Duration.ofSeconds(15)).until(() -> p.leases.heartbeats() >= beats + 4);
            long beatsRun = p.leases.heartbeats() - beats;
            List<String> sent = new ArrayList<>(p.counted.statements).subList(statements, p.counted.statements.size());
            assertThat(sent).allMatch(renew::equals);
            assertThat((long) sent.size()).as("statements of %d beats for 6 members", beatsRun).isBetween(beatsRun - 1, beatsRun + 1);
            // Each renewal is one statement (one now()): after it, every owned row of the 3 groups shares one heartbeat_at.
            String in = groups.toString().replace('[', '(').replace(']', ')');
            await().atMost(Duration.ofSeconds(15)).until(() -> scalar(t, "SELECT count(DISTINCT heartbeat_at) FROM "
                    + t.schema() + ".shard_lease WHERE consumer_group_id IN " + in + " AND owner_token IS NOT NULL") == 1
                    && scalar(t, "SELECT count(*) FROM " + t.schema() + ".shard_lease WHERE consumer_group_id IN " + in
                    + " AND owner_token IS NOT NULL") == 12);
            assertThat(members).allSatisfy(m -> assertThat(m.held()).hasSize(2));
        }
    }

    @Test
    void aLateRenewalOfAnotherMemberBringsTheHeartbeatForwardToTheMomentItsBucketCanBeTaken(TestDatabase t) {
        long gid = group(admin, "shard.late", "g");
        declare(gid, 2);
        String q = t.schema() + ".shard_lease";
        UUID other = UUID.randomUUID(); // a member of another process, renewing (or not) by itself
        t.execute("UPDATE " + q + " SET owner_token = '" + other + "', lease_expires_at = now() + interval '25 s'"
                + " WHERE consumer_group_id = " + gid);
        dev.sluice.internal.runtime.ClientRuntime runtime = new dev.sluice.internal.runtime.ClientRuntime("late", 1, 1);
        // A 30 s lease: a heartbeat every 10 s, a takeover 15 s after the lease ran out.
        try (ShardLeases leases = new ShardLeases(db, t.schema(), Duration.ofSeconds(30), runtime, null)) {
            ShardMember m = leases.join(gid, 2, () -> 0, () -> { });
            long beat = leases.heartbeatInterval().toNanos();
            assertThat(leases.beatOnce()).as("the other member renews on time").isEqualTo(beat);

            // Its lease ran out 14 s ago: one of its buckets can be taken in about a second, not at the next beat.
            t.execute("UPDATE " + q + " SET lease_expires_at = now() - interval '14 s' WHERE consumer_group_id = " + gid
                    + " AND bucket = 1");
            long next = leases.beatOnce();
            assertThat(next).isBetween(Duration.ofMillis(500).toNanos(), Duration.ofMillis(1_100).toNanos());
            assertThat(m.held()).isEmpty();

            // Past the grace the bucket is claimable (counted by the heartbeat), so nothing is late any more.
            t.execute("UPDATE " + q + " SET lease_expires_at = now() - interval '16 s' WHERE consumer_group_id = " + gid
                    + " AND bucket = 1");
            assertThat(leases.beatOnce()).isEqualTo(beat);
            m.step();
            assertThat(m.held()).containsExactly(1);
        } finally {
            runtime.close();
        }
    }

    @Test
    void theRenewalAndTheClaimUseTheIndexesNotAScanOfTheTable(TestDatabase t) throws SQLException {
        // A table of some size: 8 groups of 1,024 buckets, a few of them owned.
        List<Long> groups = new ArrayList<>();
        for (int g = 0; g < 8; g++) {
            long gid = group(admin, "shard.plan", "g" + g);
            declare(gid, 1024);
            groups.add(gid);
        }
        UUID token = UUID.randomUUID();
        String q = t.schema();
        t.execute("UPDATE " + q + ".shard_lease SET owner_token = '" + token + "', lease_expires_at = now() + interval '1 minute'"
                + " WHERE consumer_group_id = " + groups.get(0) + " AND bucket < 4");
        t.execute("ANALYZE " + q + ".shard_lease");
        ShardSql sql = ShardSql.of(Identifiers.quote(q));
        String gids = "ARRAY[" + groups.get(0) + ", " + groups.get(1) + "]::int8[]";
        String tokens = "ARRAY['" + token + "', '" + UUID.randomUUID() + "']::uuid[]";
        try (Connection c = t.connect()) {
            // The plan for these values, and the generic plan a prepared statement may switch to.
            for (String mode : List.of("force_custom_plan", "force_generic_plan")) {
                try (Statement s = c.createStatement()) {
                    s.execute("SET plan_cache_mode = " + mode);
                    s.execute("DEALLOCATE ALL");
                    s.execute("PREPARE renew(int8[], uuid[], float8) AS " + dollars(sql.renew));
                    s.execute("PREPARE claim(float8, uuid, int8, int8) AS " + dollars(sql.claimOne));
                }
                String renewPlan = plan(c, "EXPLAIN EXECUTE renew(" + gids + ", " + tokens + ", 1.0)");
                assertThat(renewPlan).as(mode + ":\n" + renewPlan).contains("shard_lease_owner_idx")
                        .doesNotContain("Seq Scan on shard_lease");
                String claimPlan = plan(c, "EXPLAIN EXECUTE claim(1.0, '" + token + "', NULL, " + groups.get(0) + ")");
                assertThat(claimPlan).as(mode + ":\n" + claimPlan).doesNotContain("Seq Scan on shard_lease");
            }
        }
    }

    /** {@code ?} placeholders as {@code $1, $2, …} (the statements have no '?' elsewhere). */
    private static String dollars(String sql) {
        StringBuilder out = new StringBuilder();
        int n = 0;
        for (char ch : sql.toCharArray()) {
            if (ch == '?') {
                out.append('$').append(++n);
            } else {
                out.append(ch);
            }
        }
        return out.toString();
    }

    private static String plan(Connection c, String explain) throws SQLException {
        StringBuilder out = new StringBuilder();
        try (PreparedStatement ps = c.prepareStatement(explain); ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                out.append(rs.getString(1)).append('\n');
            }
        }
        return out.toString();
    }
}
