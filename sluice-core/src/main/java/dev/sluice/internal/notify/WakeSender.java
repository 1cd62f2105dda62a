package dev.sluice.internal.notify;

import dev.sluice.internal.jdbc.Db;
import dev.sluice.internal.jdbc.Sql;
import dev.sluice.internal.jdbc.SqlErrors;
import dev.sluice.internal.runtime.ClientRuntime;
import dev.sluice.internal.runtime.PollLoop;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends the wake-ups of the client's own commits (a produce, an enqueue) to the other processes, after those
 * commits and outside them, coalesced: every payload asked for since the last send goes in one short statement.
 *
 * <p>Why not {@code pg_notify} inside the producing transaction: a transaction that notified takes one lock for
 * the whole database at its commit (PostgreSQL's notification queue, {@code Lock:object} on {@code pg_database}
 * in {@code pg_locks}) and holds it through its commit record's WAL flush, so every notifying commit of every
 * client waits for the one before it to reach the disk. The lab showed a dozen backends waiting on it at once,
 * producers and enqueuers in front. Here the lock is taken only by this statement, which changes no data and
 * commits without waiting for the flush ({@code synchronous_commit} off for its own transaction: a wake-up lost
 * in a crash costs a consumer's idle check, never a message), and only once for many commits.
 *
 * <p>The sends run as a {@link PollLoop} on the client's shared scheduler (no thread of its own; none starts
 * before the first wake-up); a payload asked for during a send goes in the next one, at once. A failed send
 * keeps its payloads for the retry. {@link #close()} sends what is left, once, so a short-lived process (a CLI
 * call) still wakes the others. What a process that dies between a commit and its send leaves unsent, the
 * listeners' idle checks pick up.
 */
public final class WakeSender implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(WakeSender.class);
    /** The loop's wait with nothing to send: it is woken by {@link #send}. */
    private static final long IDLE_NANOS = TimeUnit.HOURS.toNanos(1);

    /**
     * One notification per payload on the schema's channel, in one transaction that commits asynchronously.
     * Parameters: channel, payloads. Returns how many were sent.
     */
    static final String SEND = """
        WITH quick AS MATERIALIZED (SELECT set_config('synchronous_commit', 'off', true) AS s),
        sent AS MATERIALIZED (SELECT pg_notify(?, w.payload) FROM quick, unnest(?::text[]) AS w(payload))
        SELECT count(*) FROM sent
        """;

    private final Db db;
    private final String channel;
    private final PollLoop loop;
    private final Set<String> pending = ConcurrentHashMap.newKeySet();
    private volatile boolean started;
    private volatile boolean closed;

    public WakeSender(Db db, String schema, ClientRuntime runtime) {
        this.db = db;
        this.channel = Channels.forSchema(schema);
        this.loop = runtime.loop("wake-ups " + schema, this::poll, SqlErrors::maxPollBackoffMillis);
    }

    /**
     * Sends {@code payload} (a stream id, or a queue's wake key) to every listener of the schema, soon: call it
     * after the commit it announces. Repeats before the next send are folded into one.
     */
    public void send(String payload) {
        if (closed) {
            return;
        }
        pending.add(payload);
        if (!started) {
            synchronized (this) {
                if (!started) {
                    loop.start();
                    started = true;
                    return;
                }
            }
        }
        loop.wake();
    }

    private long poll() {
        if (!flush()) {
            return IDLE_NANOS;
        }
        return pending.isEmpty() ? IDLE_NANOS : 0;
    }

    /** Sends what is pending in one statement; false when nothing was. A failure puts the payloads back. */
    private boolean flush() {
        List<String> batch = new ArrayList<>();
        for (Iterator<String> it = pending.iterator(); it.hasNext(); ) {
            batch.add(it.next());
            it.remove();
        }
        if (batch.isEmpty()) {
            return false;
        }
        try {
            // A repeated send only wakes a listener twice, so a send whose connection died is replayed.
            db.autoCommitReplayable("send wake-ups", c -> Sql.list(c, SEND, rs -> rs.getLong(1), channel,
                    Sql.array("text", batch)));
        } catch (RuntimeException e) {
            pending.addAll(batch);
            throw e;
        }
        return true;
    }

    /** How many payloads wait for the next send (for tests). */
    int pending() {
        return pending.size();
    }

    /** Stops the loop and sends what is left, once (a failure is logged: listeners fall back to their idle checks). */
    @Override
    public void close() {
        closed = true;
        loop.close();
        if (!pending.isEmpty()) {
            try {
                flush();
            } catch (RuntimeException e) {
                log.debug("last wake-ups not sent (listeners re-check at their idle checks): {}", e.toString());
            }
        }
    }
}
