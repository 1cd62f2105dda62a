package dev.sluice;

/**
 * Counters of one consumption.
 *
 * @param delivered          handler invocations
 * @param succeeded          successes
 * @param retried            failures that will be retried
 * @param dead               messages that became dead letters
 * @param delayed            delay outcomes
 * @param deferred           messages that waited on their key (exclusive/ordered)
 * @param skippedSuperseded  compacted-away messages skipped
 * @param skippedVersion     messages of schema versions the group does not accept, skipped
 * @param skippedFiltered    messages not matching the group's bindings, skipped
 * @param rangesClaimed      fresh ranges claimed
 * @param rangesReclaimed    expired ranges taken over
 * @param leasesLost         outcomes refused because the lease was lost
 * @param handedOn           exception rows (ordered/exclusive) that ran on a key handed straight on by the key's
 *                           previous row when it succeeded, without a claim or a key take of their own
 */
public record ConsumptionStats(long delivered, long succeeded, long retried, long dead, long delayed, long deferred,
                               long skippedSuperseded, long skippedVersion, long skippedFiltered, long rangesClaimed,
                               long rangesReclaimed, long leasesLost, long handedOn) {
}
