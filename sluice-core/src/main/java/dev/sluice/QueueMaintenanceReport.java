package dev.sluice;

/**
 * What one maintenance tick ({@link Queue#maintain()}) did, over every queue of the schema.
 *
 * @param rescued        expired claims put back to pending (their attempt stays counted)
 * @param rescuedToDead  expired claims of jobs on their last attempt, moved to the dead jobs
 *                       ({@link DeadReason#CLAIM_EXPIRED})
 * @param expired        unclaimed jobs past their {@code expiresAt}, moved to the dead jobs
 *                       ({@link DeadReason#EXPIRED})
 * @param purged         dead jobs past their retention, deleted
 */
public record QueueMaintenanceReport(int rescued, int rescuedToDead, int expired, int purged) {

    /** Whether the tick changed nothing. */
    public boolean idle() {
        return rescued == 0 && rescuedToDead == 0 && expired == 0 && purged == 0;
    }
}
