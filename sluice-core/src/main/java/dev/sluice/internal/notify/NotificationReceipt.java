package dev.sluice.internal.notify;

import java.lang.reflect.Field;
import java.sql.Connection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes pgjdbc hand a notification over as soon as it is read, for as long as the session holds its
 * connection.
 *
 * <p>Why: pgjdbc 42.7's {@code getNotifications(timeout)} ends every receipt by asking
 * {@code PGStream.hasMessagePending()} whether another message follows, which peeks at the socket with a
 * 1 ms timeout and, when that times out, does not remember having checked — so every notification reached
 * the consumers at least a millisecond late (measured: p50 1.26 ms from the notifier's commit to a bare
 * pgjdbc listener, 0.2 ms without the peek; node-postgres gets the same notification at once). The peek is
 * skipped when its "next check" time lies in the future, so the session sets that time to the far future
 * on its own connection; a further notification already in flight is read by the next blocking call at
 * once. No library offers a listener without the peek, hence this narrow reflective setting, restored
 * when the connection goes back to the pool. If pgjdbc's internals differ, nothing is changed and
 * notifications are merely a millisecond slower.
 */
final class NotificationReceipt implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(NotificationReceipt.class);
    private static volatile boolean warned;

    private final Object stream;
    private final Field nextCheck;
    private final long before;

    private NotificationReceipt(Object stream, Field nextCheck, long before) {
        this.stream = stream;
        this.nextCheck = nextCheck;
        this.before = before;
    }

    /** Turns the trailing peek off on {@code c}; closing the result turns it back on. Never throws. */
    static NotificationReceipt prompt(Connection c) {
        try {
            Object executor = c.unwrap(org.postgresql.jdbc.PgConnection.class).getQueryExecutor();
            Field streamField = field(executor.getClass(), "pgStream");
            Object stream = streamField.get(executor);
            Field nextCheck = field(stream.getClass(), "nextStreamAvailableCheckTime");
            if (nextCheck.getType() != long.class) {
                throw new NoSuchFieldException("nextStreamAvailableCheckTime is not a long");
            }
            long before = nextCheck.getLong(stream);
            nextCheck.setLong(stream, Long.MAX_VALUE);
            return new NotificationReceipt(stream, nextCheck, before);
        } catch (Exception | LinkageError e) {
            if (!warned) {
                warned = true;
                log.info("notifications are handed over with pgjdbc's 1 ms trailing check (could not skip it): error={}", e.toString());
            }
            return new NotificationReceipt(null, null, 0);
        }
    }

    /** Whether the trailing check is off on this connection (for tests). */
    boolean active() {
        return stream != null;
    }

    private static Field field(Class<?> type, String name) throws NoSuchFieldException {
        for (Class<?> k = type; k != null; k = k.getSuperclass()) {
            try {
                Field f = k.getDeclaredField(name);
                f.setAccessible(true);
                return f;
            } catch (NoSuchFieldException e) {
                // look in the superclass
            }
        }
        throw new NoSuchFieldException(type.getName() + "." + name);
    }

    @Override
    public void close() {
        if (stream != null) {
            try {
                nextCheck.setLong(stream, before);
            } catch (IllegalAccessException | RuntimeException e) {
                // the connection is being closed anyway
            }
        }
    }
}
