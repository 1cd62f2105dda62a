package dev.sluice;

import java.time.Duration;
import java.time.Instant;

/**
 * A held TTL lock ({@link Lock#tryAcquire(Duration)}). Exclusivity lapses silently at
 * {@link #expiresAt()} unless renewed; after that anyone may take the lock, and this handle's
 * {@link #renew} and {@link #release} return {@code false} and change nothing.
 *
 * <p>Pass {@link #fencingToken()} along with every write the lock protects, and have the protected
 * resource refuse tokens lower than the highest it has seen: a holder that stalled past its TTL then
 * cannot overwrite the work of the next holder. {@link #close()} releases (for try-with-resources).
 */
public interface LockHandle extends AutoCloseable {

    /** The lock's name. */
    String name();

    /** The owner recorded in {@code lock.owner} (the client id). */
    String owner();

    /**
     * The fencing token of this acquisition: strictly greater than that of every earlier acquisition of
     * the same name (takeovers of an expired lock included); never reused.
     */
    long fencingToken();

    /** When the lock expires, by the database clock, as of the acquisition or the last successful renewal. */
    Instant expiresAt();

    /**
     * Restarts the window: the lock now expires {@code ttl} from now. Fails harmlessly ({@code false},
     * nothing changed) once the lock was lost (expired, taken over or released).
     *
     * @throws SluiceException {@link ErrorCode#INVALID_LOCK_OPTIONS} for a zero, negative or too long TTL
     */
    boolean renew(Duration ttl);

    /** Frees the lock; {@code false} (nothing changed) when it was already lost. */
    boolean release();

    /** Releases the lock, ignoring whether it was still held. */
    @Override
    void close();
}
