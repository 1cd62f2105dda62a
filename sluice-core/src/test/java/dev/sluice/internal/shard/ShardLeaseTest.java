package dev.sluice.internal.shard;

import static dev.sluice.internal.shard.ShardFixture.LEASE;
import static dev.sluice.internal.shard.ShardFixture.group;
import static dev.sluice.internal.shard.ShardFixture.scalar;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.sluice.ErrorCode;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.jdbc.Identifiers;
import dev.sluice.internal.notify.ClientSession;
import dev.sluice.internal.shard.ShardFixture.Calls;
import dev.sluice.internal.shard.ShardFixture.Proc;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Shard leases against the real database: fair share, growth one bucket per claim, shedding when a member joins,
 * release on leave, takeover on expiry, the commit guard, renewal, pause, and one heartbeat statement per process.
 */
@SluiceTest
class ShardLeaseTest {
    static final Duration WAIT = Duration.ofSeconds(15);
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

    static int stored(long groupId) {
        Integer n = db.autoCommit("count", c -> shards.storedCount(c, groupId));
        return n;
    }

    static List<BucketOwner> list(long groupId) {
        return db.autoCommit("list", c -> shards.list(c, groupId));
    }

    static SortedSet<Integer> range(int from, int to) {
        return IntStream.range(from, to).boxed().collect(Collectors.toCollection(TreeSet::new));
    }

    static long owned(TestDatabase t, long groupId) {
        return scalar(t, "SELECT count(*) FROM " + t.schema() + ".shard_lease WHERE consumer_group_id = ?"
                + " AND owner_token IS NOT NULL AND lease_expires_at > now()", groupId);
    }

    @Test
    void fairShareWithOneToFiveMembersStopsEachMemberAtCeilOfCountOverMembers(TestDatabase t) {
        for (int m = 1; m <= 5; m++) {
            String g = "fair" + m;
            long gid = group(admin, "shard.fair", g);
            declare(gid, 16);
            try (Proc p = new Proc(t, "fair-" + m, false)) {
                List<ShardMember> members = new ArrayList<>();
                for (int i = 0; i < m; i++) {
                    members.add(p.member("shard.fair", g, gid, 16));
                }
                int fair = (16 + m - 1) / m;
                int claimed = 0;
                for (ShardMember member : members) {
                    ShardMember.Step s = member.step();
                    int expected = Math.min(fair, 16 - claimed);
                    assertThat(s.acquired()).as("member claims with %d members", m).hasSize(expected);
                    assertThat(member.held()).isEqualTo(s.acquired());
                    assertThat(member.fairShare()).isEqualTo(fair);
                    assertThat(member.members()).isEqualTo(m);
                    assertThat(s.excess()).isEmpty();
                    claimed += expected;
                    // A second step claims nothing more: the member is at its fair share (or nothing is left).
                    assertThat(member.step().acquired()).isEmpty();
                }
                assertThat(owned(t, gid)).isEqualTo(16);
                // Disjoint: every bucket has exactly one holder.
                Set<Integer> union = new TreeSet<>();
                members.forEach(x -> union.addAll(x.held()));
                assertThat(union).isEqualTo(range(0, 16));
                assertThat(members.stream().mapToInt(x -> x.held().size()).sum()).isEqualTo(16);
            }
        }
    }

    @Test
    void growthIsOneBucketPerClaimStatement(TestDatabase t) {
        long gid = group(admin, "shard.grow", "g");
        declare(gid, 8);
        try (Proc p = new Proc(t, "grow", false)) {
            ShardMember m = p.member("shard.grow", "g", gid, 8);
            String claim = ShardSql.of(Identifiers.quote(t.schema())).claimOne;
            ShardMember.Step s = m.step();
            assertThat(s.acquired()).isEqualTo(range(0, 8));
            // Eight claim statements, each its own transaction (its own now()): eight distinct claim times, one
            // bucket each; the loop stops at the fair share without a ninth statement.
            assertThat(p.counted.count(claim)).isEqualTo(8);
            assertThat(scalar(t, "SELECT count(DISTINCT updated_at) FROM " + t.schema()
                    + ".shard_lease WHERE consumer_group_id = ? AND owner_token IS NOT NULL", gid)).isEqualTo(8);
            // The lowest claimable bucket first: claim times ascend with the bucket number.
            assertThat(ShardFixture.strings(t, "SELECT bucket FROM " + t.schema() + ".shard_lease WHERE consumer_group_id = "
                    + gid + " ORDER BY updated_at")).containsExactly("0", "1", "2", "3", "4", "5", "6", "7");
            // At fair share and nothing claimable: a further step sends nothing.
            assertThat(m.step().isEmpty()).isTrue();
            assertThat(p.counted.count(claim)).isEqualTo(8);
        }
    }

    @Test
    void aJoiningMemberMakesTheFirstShedItsHighestBucketsWhichTheSecondThenClaims(TestDatabase t) {
        long gid = group(admin, "shard.shed", "g");
        declare(gid, 16);
        try (Proc a = new Proc(t, "shed-a", true); Proc b = new Proc(t, "shed-b", true)) {
            Calls aCalls = new Calls();
            Calls bCalls = new Calls();
            ShardMember first = a.member("shard.shed", "g", gid, 16, aCalls);
            assertThat(first.step().acquired()).isEqualTo(range(0, 16));

            int before = aCalls.get();
            ShardMember second = b.member("shard.shed", "g", gid, 16, bCalls);
            assertThat(second.step().acquired()).as("nothing claimable yet").isEmpty();
            assertThat(second.fairShare()).isEqualTo(8);

            // The first member's heartbeat sees two members: it holds more than its share and is told to act.
            await().atMost(WAIT).until(() -> aCalls.get() > before && first.fairShare() == 8);
            ShardMember.Step s = first.step();
            assertThat(s.excess()).isEqualTo(range(8, 16));
            assertThat(s.lost()).isEmpty();
            assertThat(first.needsStep()).isTrue();
            int bBefore = bCalls.get();
            first.release(s.excess());
            assertThat(first.held()).isEqualTo(range(0, 8));
            assertThat(first.step().isEmpty()).isTrue();

            // The release notified: the second member's heartbeat runs at once and tells it to claim.
            await().atMost(Duration.ofMillis(LEASE.toMillis() / 3 * 2)).until(() -> bCalls.get() > bBefore);
            assertThat(second.step().acquired()).isEqualTo(range(8, 16));
            assertThat(owned(t, gid)).isEqualTo(16);
        }
    }

    @Test
    void leaveReleasesEveryBucketAndNotifies(TestDatabase t) throws Exception {
        long gid = group(admin, "shard.leave", "g");
        declare(gid, 4);
        AtomicInteger notified = new AtomicInteger();
        try (ClientSession listener = new ClientSession(t.dataSource(), t.schema());
             AutoCloseable reg = listener.onWake(ShardSql.WAKE_KEY, notified::incrementAndGet);
             Proc p = new Proc(t, "leave", false)) {
            await().atMost(WAIT).until(listener::healthy);
            ShardMember m = p.member("shard.leave", "g", gid, 4);
            assertThat(m.step().acquired()).hasSize(4);
            int before = notified.get();
            m.leave();
            m.leave(); // idempotent
            assertThat(scalar(t, "SELECT count(*) FROM " + t.schema() + ".shard_lease WHERE consumer_group_id = ?"
                    + " AND owner_token IS NULL AND lease_expires_at IS NULL AND owner_instance_id IS NULL", gid)).isEqualTo(4);
            assertThat(m.held()).isEmpty();
            assertThat(list(gid)).allSatisfy(b -> {
                assertThat(b.ownerInstanceId()).isZero();
                assertThat(b.holder()).isNull();
                assertThat(b.leaseExpiresAt()).isNull();
            });
            await().atMost(WAIT).until(() -> notified.get() > before);

            // No member left: the heartbeat sends nothing.
            assertThat(p.leases.members()).isEmpty();
            int statements = p.counted.statements.size();
            long beats = p.leases.heartbeats();
            await().pollDelay(LEASE).atMost(WAIT).until(() -> true);
            assertThat(p.counted.statements).hasSize(statements);
            assertThat(p.leases.heartbeats()).isEqualTo(beats);
        }
    }

    @Test
    void aMemberThatStopsRenewingLosesItsBucketsToAnotherAndCannotRenewOrCommitThem(TestDatabase t) throws Exception {
        long gid = group(admin, "shard.expire", "g");
        declare(gid, 8);
        try (Proc a = new Proc(t, "expire-a", false); Proc b = new Proc(t, "expire-b", false)) {
            ShardMember dead = a.member("shard.expire", "g", gid, 8);
            Calls bCalls = new Calls();
            ShardMember alive = b.member("shard.expire", "g", gid, 8, bCalls);
            SortedSet<Integer> deadHeld = dead.step().acquired();
            assertThat(deadHeld).isEqualTo(range(0, 4));
            assertThat(alive.step().acquired()).isEqualTo(range(4, 8));
            long aliveInstance = b.joined.get(0).instanceId();

            // Process a freezes: neither its fleet heartbeat nor its shard heartbeat runs any more.
            a.runtime.close();
            // Its local view ends by its own clock, no later than the rows' expiry.
            await().atMost(WAIT).until(() -> dead.held().isEmpty());
            // After its lease (and its fleet instance's) the other member's heartbeat sees one member and 4 claimable.
            await().atMost(WAIT).until(() -> alive.fairShare() == 8 && alive.needsStep());
            assertThat(alive.step().acquired()).isEqualTo(range(0, 4));
            assertThat(alive.held()).isEqualTo(range(0, 8));
            assertThat(list(gid)).allSatisfy(x -> assertThat(x.ownerInstanceId()).isEqualTo(aliveInstance));

            // The frozen member wakes up: its commit guard returns nothing, its renewal does not take them back.
            try (Connection c = t.connect()) {
                c.setAutoCommit(false);
                assertThat(dead.lockHeld(c, deadHeld)).isEmpty();
                c.rollback();
            }
            a.leases.beatOnce();
            assertThat(dead.held()).isEmpty();
            ShardMember.Step s = dead.step();
            assertThat(s.lost()).isEqualTo(deadHeld);
            assertThat(s.acquired()).isEmpty();
            assertThat(list(gid)).allSatisfy(x -> assertThat(x.ownerInstanceId()).isEqualTo(aliveInstance));
            assertThat(owned(t, gid)).isEqualTo(8);
        }
    }

    @Test
    void aLateRenewalWithinTheTakeoverGraceKeepsTheBucketsWithTheirOwner(TestDatabase t) throws Exception {
        long gid = group(admin, "shard.grace", "g");
        declare(gid, 8);
        try (Proc a = new Proc(t, "grace-a", false); Proc b = new Proc(t, "grace-b", false)) {
            ShardMember late = a.member("shard.grace", "g", gid, 8);
            ShardMember other = b.member("shard.grace", "g", gid, 8);
            SortedSet<Integer> lateHeld = late.step().acquired();
            assertThat(other.step().acquired()).isEqualTo(range(4, 8));
            a.runtime.close(); // a stalls: no heartbeat of its own from now on
            // Its fleet instance is gone and its buckets' leases ran out a quarter of a lease ago: within the grace.
            String lease = t.schema() + ".shard_lease";
            long lateInstance = a.joined.get(0).instanceId();
            try (Connection c = t.connect(); java.sql.Statement st = c.createStatement()) {
                st.executeUpdate("DELETE FROM " + t.schema() + ".worker_instance WHERE id = " + lateInstance);
                st.executeUpdate("UPDATE " + lease + " SET lease_expires_at = now() - interval '" + LEASE.toMillis() / 4
                        + " milliseconds' WHERE consumer_group_id = " + gid + " AND owner_instance_id = " + lateInstance);
            }
            b.leases.beatOnce();
            assertThat(other.fairShare()).isEqualTo(8);
            assertThat(other.step().acquired()).as("within the grace nothing of the late owner is claimable").isEmpty();
            try (Connection c = t.connect()) {
                c.setAutoCommit(false);
                assertThat(late.lockHeld(c, lateHeld)).as("the late owner may still commit").isEqualTo(lateHeld);
                c.rollback();
            }
            // Past the grace the other member takes them, and the late owner's guard refuses from then on.
            try (Connection c = t.connect(); java.sql.Statement st = c.createStatement()) {
                st.executeUpdate("UPDATE " + lease + " SET lease_expires_at = now() - interval '" + LEASE.toMillis() * 3 / 4
                        + " milliseconds' WHERE consumer_group_id = " + gid + " AND owner_instance_id = " + lateInstance);
            }
            b.leases.beatOnce();
            assertThat(other.step().acquired()).isEqualTo(lateHeld);
            try (Connection c = t.connect()) {
                c.setAutoCommit(false);
                assertThat(late.lockHeld(c, lateHeld)).isEmpty();
                c.rollback();
            }
        }
    }

    @Test
    void theCommitGuardHoldsOffATakeoverUntilTheGuardingTransactionEnds(TestDatabase t) throws Exception {
        long gid = group(admin, "shard.guard", "g");
        declare(gid, 2);
        try (Proc a = new Proc(t, "guard-a", false); Proc b = new Proc(t, "guard-b", false)) {
            ShardMember holder = a.member("shard.guard", "g", gid, 2);
            assertThat(holder.step().acquired()).isEqualTo(range(0, 2));
            ShardMember taker = b.member("shard.guard", "g", gid, 2);
            assertThat(taker.step().acquired()).isEmpty();
            try (Connection c = t.connect()) {
                c.setAutoCommit(false);
                assertThat(holder.lockHeld(c, List.of(0, 1))).containsExactly(0, 1);
                assertThat(holder.lockHeld(c, List.of(1, 5))).containsExactly(1);
                // The holder stops renewing while its transaction is open; the leases run out under the guard.
                a.runtime.close();
                await().atMost(WAIT).until(() -> scalar(t, "SELECT count(*) FROM " + t.schema()
                        + ".shard_lease WHERE consumer_group_id = ? AND lease_expires_at <= now()", gid) == 2);
                // The taker's heartbeat sees them claimable (and, once the holder's instance expired, a share of 2) ...
                await().atMost(WAIT).until(() -> {
                    b.leases.beatOnce();
                    return taker.fairShare() == 2 && taker.needsStep();
                });
                // ... but the guard's lock is still held: its claim skips the rows and takes nothing.
                String claim = ShardSql.of(Identifiers.quote(t.schema())).claimOne;
                long claims = b.counted.count(claim);
                assertThat(taker.step().acquired()).isEmpty();
                assertThat(b.counted.count(claim)).as("a claim was tried").isGreaterThan(claims);
                c.commit();
            }
            // The guard committed: the takeover goes through (its taker reads what the holder committed).
            b.leases.beatOnce();
            assertThat(taker.step().acquired()).isEqualTo(range(0, 2));
        }
    }

    @Test
    void aMismatchedShardCountIsRejectedAndChangesNothing(TestDatabase t) {
        long gid = group(admin, "shard.mismatch", "g");
        assertThat(stored(gid)).isZero();
        assertThat(list(gid)).isEmpty();
        declare(gid, 16);
        declare(gid, 16); // the same count again: nothing
        List<BucketOwner> before = list(gid);
        assertThatThrownBy(() -> declare(gid, 8)).isInstanceOfSatisfying(SluiceException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.PARTITIONS_MISMATCH);
            assertThat(e.code().code()).isEqualTo("SLU-0120");
            assertThat(e.problem()).contains("16").contains("8");
        });
        assertThat(list(gid)).isEqualTo(before).hasSize(16);
        assertThat(stored(gid)).isEqualTo(16);
        assertThatThrownBy(() -> declare(gid, 0)).isInstanceOfSatisfying(SluiceException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));

        // The operator's repartition replaces the rows.
        db.transaction("repartition", c -> {
            shards.repartition(c, gid, 4);
            return null;
        });
        assertThat(list(gid)).extracting(BucketOwner::bucket).containsExactly(0, 1, 2, 3);
        assertThat(list(gid)).allSatisfy(x -> assertThat(x.shardCount()).isEqualTo(4));
    }

    @Test
    void renewalKeepsOwnershipAcrossSeveralLeases(TestDatabase t) {
        long gid = group(admin, "shard.renew", "g");
        declare(gid, 4);
        try (Proc p = new Proc(t, "renew", false)) {
            ShardMember m = p.member("shard.renew", "g", gid, 4);
            assertThat(m.step().acquired()).hasSize(4);
            List<BucketOwner> first = list(gid);
            java.time.Instant claimedAt = first.get(0).heartbeatAt();
            // Several lease periods pass, renewed by the heartbeat.
            await().atMost(WAIT).until(() -> list(gid).stream()
                    .allMatch(x -> x.heartbeatAt().isAfter(claimedAt.plus(LEASE.multipliedBy(3)))));
            List<BucketOwner> later = list(gid);
            for (int i = 0; i < 4; i++) {
                BucketOwner was = first.get(i);
                BucketOwner now = later.get(i);
                assertThat(now.ownerInstanceId()).isEqualTo(was.ownerInstanceId()).isNotZero();
                assertThat(now.holder()).isEqualTo("renew");
                assertThat(now.updatedAt()).as("no change of owner").isEqualTo(was.updatedAt());
                assertThat(now.heartbeatAt()).isAfter(was.heartbeatAt());
                assertThat(now.leaseExpiresAt()).isAfter(was.leaseExpiresAt());
            }
            assertThat(m.held()).hasSize(4);
            assertThat(m.step().isEmpty()).isTrue();
        }
    }

    @Test
    void aPausedWorkerHasFairShareZeroAndACappedOneSharesAmongItsTarget(TestDatabase t) {
        long gid = group(admin, "shard.pause", "g");
        declare(gid, 16);
        try (Proc p = new Proc(t, "pause", false)) {
            admin.fleet().setTarget("consumer:shard.pause/g", 0);
            ShardMember m = p.member("shard.pause", "g", gid, 16);
            assertThat(m.step().acquired()).isEmpty();
            assertThat(m.fairShare()).isZero();
            assertThat(owned(t, gid)).isZero();

            // Three live instances, target 2: the share is ceil(16 / 2).
            p.member("shard.pause", "g", gid, 16);
            p.member("shard.pause", "g", gid, 16);
            admin.fleet().setTarget("consumer:shard.pause/g", 2);
            // The next heartbeat reads the new target and tells the member to claim.
            await().atMost(WAIT).until(m::needsStep);
            assertThat(m.step().acquired()).hasSize(8);
            assertThat(m.fairShare()).isEqualTo(8);
            assertThat(m.members()).isEqualTo(2);

            // Paused again: the heartbeat reads share 0, and the step says everything is excess.
            admin.fleet().setTarget("consumer:shard.pause/g", 0);
            p.leases.beatOnce();
            assertThat(m.fairShare()).isZero();
            assertThat(m.step().excess()).isEqualTo(range(0, 8));
        } finally {
            admin.fleet().setTarget("consumer:shard.pause/g", -1);
        }
    }
}
