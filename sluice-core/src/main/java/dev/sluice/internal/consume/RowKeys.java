package dev.sluice.internal.consume;

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
}
