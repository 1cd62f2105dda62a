package dev.sluice.internal.runtime;

import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running parts of one client (producers, consumptions, workers, leaderships, schedule runners): each is
 * tracked from its start until it closes, and the client's close closes what is still running, newest first.
 *
 * <p>One lifecycle for all of them: a part registers right after it started; its own {@code close()} ends
 * with {@link Registration#close()}, so a finished part is not kept until the client closes; a part that
 * tries to register after the client closed is closed again at once (its started threads stop) and the
 * caller gets {@link ErrorCode#CLIENT_CLOSED}.
 *
 * <pre>{@code
 * Consumption c = start(...);
 * Tracker.Registration r = tracker.track("consumption of orders/billing", c); // closes c and throws if closed
 * // … c.close() calls r.close()
 * }</pre>
 */
public final class Tracker {
    private static final Logger log = LoggerFactory.getLogger(Tracker.class);

    private final Map<AutoCloseable, Registration> live = new LinkedHashMap<>();
    private boolean closed;

    /**
     * Tracks a started part.
     *
     * @param what a description for logs and the error ("consumption of orders/billing")
     * @throws SluiceException {@link ErrorCode#CLIENT_CLOSED} after {@link #closeAll()}; {@code part} is closed first
     */
    public Registration track(String what, AutoCloseable part) {
        synchronized (this) {
            if (!closed) {
                Registration r = new Registration(what, part);
                live.put(part, r);
                return r;
            }
        }
        closeQuietly(what, part);
        throw new SluiceException(ErrorCode.CLIENT_CLOSED, "the Sluice client is closed; the " + what + " was not started");
    }

    /** Tracks a started part under its own description ({@code toString}), or its class name when it has none. */
    public Registration track(AutoCloseable part) {
        String s = part.toString();
        return track(s.startsWith(part.getClass().getName() + "@") ? part.getClass().getSimpleName() : s, part);
    }

    /** Whether {@link #closeAll()} ran. */
    public synchronized boolean closed() {
        return closed;
    }

    /** How many parts are running. */
    public synchronized int size() {
        return live.size();
    }

    /** A part closed itself: stops tracking it (no-op when it is not tracked, or null). */
    public synchronized void untrack(AutoCloseable part) {
        live.remove(part);
    }

    /** Refuses new parts and closes the running ones, newest first; a failing close is logged and the rest go on. */
    public void closeAll() {
        List<Registration> running;
        synchronized (this) {
            closed = true;
            running = new ArrayList<>(live.values());
        }
        for (int i = running.size() - 1; i >= 0; i--) {
            Registration r = running.get(i);
            closeQuietly(r.what, r.part);
            r.close();
        }
    }

    private static void closeQuietly(String what, AutoCloseable part) {
        try {
            part.close();
        } catch (Exception e) {
            log.warn("closing the {} failed: {}", what, e.toString());
        }
    }

    /** A tracked part; closing it stops tracking (idempotent). */
    public final class Registration implements AutoCloseable {
        private final String what;
        private final AutoCloseable part;

        private Registration(String what, AutoCloseable part) {
            this.what = what;
            this.part = part;
        }

        @Override
        public void close() {
            synchronized (Tracker.this) {
                live.remove(part, this);
            }
        }

        @Override
        public String toString() {
            return what;
        }
    }
}
