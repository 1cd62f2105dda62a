package dev.sluice.internal.shard;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Collection;
import java.util.Collections;
import java.util.Iterator;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.function.LongSupplier;

/**
 * One member of a partitioned group in this process — one running consumption, a fleet instance of the group's
 * consumer worker — and the buckets it holds. The process's {@link ShardLeases} renews them on its heartbeat and
 * calls {@code onChange} when the member has to act; the consumer then calls {@link #step()} from its own loop,
 * which claims buckets one at a time up to the fair share and says what it acquired, lost and must give back.
 *
 * <p>A bucket is held until its local deadline: the time its claim or last renewal was <em>sent</em> plus the
 * lease, on this process's monotonic clock, so the local view ends no later than the row's expiry. Before it
 * writes a bucket's position the consumer runs {@link #lockHeld} in that transaction: a takeover then waits for
 * the commit. The member's lease token never leaves this class and its {@link ShardLeases}.
 *
 * <pre>{@code
 * ShardMember m = leases.join(groupId, 16, instance::instanceId, consumerLoop::wake);
 * ShardMember.Step s = m.step();      // in the consumer's loop, when woken
 * s.lost().forEach(this::abandon);    // stop at once, do not commit
 * s.acquired().forEach(this::start);  // read the bucket's committed position, then work
 * m.release(finish(s.excess()));      // after their in-flight work is done
 * m.leave();                          // on close
 * }</pre>
 */
public final class ShardMember {
    /**
     * What a {@link #step()} changed for the consumer, each set in ascending order.
     *
     * @param acquired buckets held now that were not at the previous step (claimed, or back after a lapse)
     * @param lost     buckets held at the previous step that are not now (taken over, expired, repartitioned)
     * @param excess   buckets above the fair share, the highest numbers, to give back with {@link #release}
     *                 after their in-flight work is done (reported again by every step until released)
     */
    public record Step(SortedSet<Integer> acquired, SortedSet<Integer> lost, SortedSet<Integer> excess) {
        /** Whether nothing changed and nothing is to be given back. */
        public boolean isEmpty() {
            return acquired.isEmpty() && lost.isEmpty() && excess.isEmpty();
        }
    }

    private final ShardLeases leases;
    private final long groupId;
    private final int shardCount;
    private final LongSupplier instanceId;
    private final Runnable onChange;
    /** The member's lease token; only this member and its {@link ShardLeases} see it. */
    final UUID token = UUID.randomUUID();

    // Guarded by this.
    /** Held buckets: {deadline, since} on System.nanoTime — since: when this process learned that it holds it. */
    private final Map<Integer, long[]> buckets = new TreeMap<>();
    /** The buckets the consumer was told it holds (at the previous step, less what it released). */
    private final SortedSet<Integer> reported = new TreeSet<>();
    /** The fair share as last read; -1 before the first claim or renewal. */
    private int fair = -1;
    private int members;
    /** Claimable buckets of the group as last read by the heartbeat; -1 unknown. */
    private int claimable = -1;
    /** A claim found nothing since the last heartbeat (at fair share, or nothing claimable). */
    private boolean claimsExhausted;
    /** Claims and releases in progress, and when the last one ended: a heartbeat does not adopt rows meanwhile. */
    private int inFlight;
    private long lastOpEndNanos;
    private volatile boolean closed;

    ShardMember(ShardLeases leases, long groupId, int shardCount, LongSupplier instanceId, Runnable onChange) {
        this.leases = leases;
        this.groupId = groupId;
        this.shardCount = shardCount;
        this.instanceId = instanceId;
        this.onChange = onChange;
        this.lastOpEndNanos = System.nanoTime();
    }

    /** The group's id. */
    public long groupId() {
        return groupId;
    }

    /** The group's number of buckets, as given at join. */
    public int shardCount() {
        return shardCount;
    }

    /** The member's fleet instance now (0 before it claimed one). */
    long instanceId() {
        return instanceId.getAsLong();
    }

    /** The fair share as last read by a claim or heartbeat, -1 before the first. */
    public synchronized int fairShare() {
        return fair;
    }

    /** The group's members (live instances, capped at the worker's target) as last read, 0 before the first. */
    public synchronized int members() {
        return members;
    }

    /** The buckets held now (their local deadline has not passed), ascending. */
    public synchronized SortedSet<Integer> held() {
        return Collections.unmodifiableSortedSet(heldNow(System.nanoTime()));
    }

    /** Whether the bucket is held now (its local deadline has not passed). */
    public synchronized boolean holds(int bucket) {
        long[] b = buckets.get(bucket);
        return b != null && !closed && System.nanoTime() - b[0] < 0;
    }

    /** Whether a {@link #step()} has something to do: a bucket was lost or gained, one may be claimed, or one is excess. */
    public synchronized boolean needsStep() {
        return !closed && needsStepLocked(System.nanoTime());
    }

    /**
     * Claims unowned or expired buckets one at a time — one claim statement each, the fair share checked again in
     * SQL every time — until at the fair share or nothing is claimable (no statement at all when the last heartbeat
     * said so), then says what changed since the previous step and which buckets are excess. Call it from the
     * consumer's own loop, when told to act or now and then.
     *
     * @throws dev.sluice.SluiceException a coded database error when a claim fails (what it claimed before stays held)
     */
    public Step step() {
        if (closed) {
            return new Step(Collections.emptySortedSet(), Collections.emptySortedSet(), Collections.emptySortedSet());
        }
        // The last heartbeat's claimable count decides whether to start; once claiming, each claim's own answer
        // (a bucket or none, and the fair share it read) decides whether to go on — a heartbeat that lands between
        // two claims counted with an older snapshot and must not stop the growth one bucket early.
        if (shouldClaim()) {
            for (int claims = 0; claims < shardCount && !closed; claims++) {
                if (!leases.claimOne(this)) {
                    break;
                }
            }
        }
        synchronized (this) {
            TreeSet<Integer> now = heldNow(System.nanoTime());
            SortedSet<Integer> acquired = new TreeSet<>(now);
            acquired.removeAll(reported);
            SortedSet<Integer> lost = new TreeSet<>(reported);
            lost.removeAll(now);
            reported.clear();
            reported.addAll(now);
            return new Step(Collections.unmodifiableSortedSet(acquired), Collections.unmodifiableSortedSet(lost),
                    Collections.unmodifiableSortedSet(excess(now)));
        }
    }

    /**
     * Gives buckets back in a transaction of its own (only rows this member still owns) and notifies the schema's
     * channel, so the other members' heartbeats run at once; they are no longer held from this call on.
     *
     * @throws dev.sluice.SluiceException a coded database error; the buckets then expire within the lease, unless
     *                                    the heartbeat finds them still owned and hands them back by the next step
     */
    public void release(Collection<Integer> released) {
        if (released.isEmpty()) {
            return;
        }
        int[] list;
        synchronized (this) {
            for (Integer b : released) {
                buckets.remove(b);
                reported.remove(b);
            }
            list = released.stream().mapToInt(Integer::intValue).distinct().toArray();
            inFlight++;
        }
        try {
            leases.release(this, list);
        } finally {
            opEnded();
        }
    }

    /**
     * The commit guard, in the caller's transaction before it writes positions: locks (FOR SHARE) the rows of the
     * buckets this member still owns with a live lease and returns those buckets. A takeover of a locked bucket
     * waits for the caller's commit, so its taker reads the committed position; positions of buckets not returned
     * must not be written.
     */
    public SortedSet<Integer> lockHeld(Connection c, Collection<Integer> wanted) throws SQLException {
        if (wanted.isEmpty() || closed) {
            return Collections.emptySortedSet();
        }
        return Collections.unmodifiableSortedSet(leases.lockHeld(c, this, wanted));
    }

    /** Gives back every bucket this member holds and leaves the heartbeat; idempotent. */
    public void leave() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            buckets.clear();
            reported.clear();
        }
        leases.leave(this);
    }

    boolean closed() {
        return closed;
    }

    // ------------------------------------------------------------------ called by ShardLeases

    private synchronized boolean shouldClaim() {
        if (closed) {
            return false;
        }
        if (fair < 0) {
            return true; // nothing read yet: the claim's SQL knows the fair share
        }
        return !claimsExhausted && claimable != 0 && heldNow(System.nanoTime()).size() < fair;
    }

    /** A claim is about to be sent. */
    synchronized void claimStarted() {
        inFlight++;
    }

    /**
     * A claim returned: {@code bucket} (-1: none) held until {@code sentNanos} + lease, and the fair share it read.
     * Returns whether another claim may follow.
     */
    synchronized boolean claimEnded(int bucket, long deadlineNanos, int fairShare, int live) {
        long now = System.nanoTime();
        inFlight--;
        lastOpEndNanos = now;
        fair = fairShare;
        members = live;
        if (bucket < 0 || closed) {
            claimsExhausted = true;
            return false;
        }
        buckets.put(bucket, new long[] {deadlineNanos, now});
        if (claimable > 0) {
            claimable--;
        }
        return heldNow(now).size() < fair;
    }

    /** A claim failed. */
    synchronized void claimFailed() {
        inFlight--;
        lastOpEndNanos = System.nanoTime();
    }

    private synchronized void opEnded() {
        inFlight--;
        lastOpEndNanos = System.nanoTime();
    }

    /**
     * A heartbeat sent at {@code sentNanos} renewed {@code renewed} (ascending) and read the group's figures; returns
     * whether the member has to act. A bucket this process learned of after the heartbeat was sent is kept (the
     * renewal may have run before its claim committed); a row the member owns but did not know of (a claim whose
     * answer was lost) is adopted when no claim or release of the member ran meanwhile.
     */
    synchronized boolean renewed(int[] renewed, long sentNanos, long deadlineNanos, int fairShare, int live, int free) {
        if (closed) {
            return false;
        }
        fair = fairShare;
        members = live;
        claimable = free;
        claimsExhausted = false;
        TreeSet<Integer> got = new TreeSet<>();
        for (int b : renewed) {
            got.add(b);
        }
        for (Iterator<Map.Entry<Integer, long[]>> it = buckets.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<Integer, long[]> e = it.next();
            long[] b = e.getValue();
            if (got.remove(e.getKey())) {
                b[0] = Math.max(b[0], deadlineNanos);
            } else if (b[1] - sentNanos < 0) {
                it.remove(); // taken over, or the group was repartitioned
            }
        }
        if (!got.isEmpty() && inFlight == 0 && lastOpEndNanos - sentNanos < 0) {
            for (int b : got) {
                buckets.put(b, new long[] {deadlineNanos, sentNanos});
            }
        }
        return needsStepLocked(System.nanoTime());
    }

    /** Runs the consumer's callback (from the heartbeat's thread). */
    void changed() {
        if (!closed) {
            onChange.run();
        }
    }

    private boolean needsStepLocked(long now) {
        SortedSet<Integer> held = heldNow(now);
        if (!held.equals(reported)) {
            return true; // lost or gained since the consumer last looked
        }
        if (fair < 0) {
            return true;
        }
        return held.size() > fair || (!claimsExhausted && claimable > 0 && held.size() < fair);
    }

    private TreeSet<Integer> heldNow(long now) {
        TreeSet<Integer> held = new TreeSet<>();
        if (!closed) {
            buckets.forEach((b, v) -> {
                if (now - v[0] < 0) {
                    held.add(b);
                }
            });
        }
        return held;
    }

    private SortedSet<Integer> excess(TreeSet<Integer> held) {
        TreeSet<Integer> out = new TreeSet<>();
        if (fair < 0 || held.size() <= fair) {
            return out;
        }
        int drop = held.size() - fair;
        Iterator<Integer> it = held.descendingIterator();
        while (drop-- > 0) {
            out.add(it.next());
        }
        return out;
    }

    @Override
    public String toString() {
        return "shard member of group " + groupId + " (instance " + instanceId.getAsLong() + ")";
    }
}
