package dev.sluice.internal.consume;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * What the exception queue needs of a key policy to run one row ({@link ExceptionQueue}): whether keys are kept
 * apart at all, taking a row's key, and letting it go (which wakes the key's next deferred row). Implemented by the
 * key leases of the keyed policies ({@link KeyLeases}) and by a partitioned member's in-memory keys ({@link LocalKeys}).
 */
interface RowKeys {
    /** Whether this policy keeps keys apart at all. */
    boolean keyed();

    /** Takes the key of one exception row (true when it may run now; true for a message without a key). */
    boolean acquireRow(Fetched f);

    /** Lets go of a row's key and wakes the next deferred row of it (nothing for a null key). */
    void releaseRow(String key);

    /**
     * Whether a row that succeeded under its key may hand the key straight to the key's next exception row, in the
     * transaction that resolves it ({@link ExceptionQueue}): the key leases of the keyed policies; not a partitioned
     * member's in-memory keys.
     */
    default boolean handsOn() {
        return false;
    }

    /**
     * In the caller's transaction, under the held key: whether the key's row {@code id} must still wait — for
     * {@code ordered}, an unresolved earlier message of the key in an open range.
     */
    default boolean blockedIn(Connection c, String key, long id) throws SQLException {
        return false;
    }

    /**
     * In the caller's transaction: lets go of the key and wakes its next deferred row. Called only when
     * {@link #handsOn()}; keys that are not handed on are let go by {@link #releaseRow} alone.
     */
    void releaseIn(Connection c, String key) throws SQLException;
}
