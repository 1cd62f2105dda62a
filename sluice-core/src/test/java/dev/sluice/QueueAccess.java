package dev.sluice;

/** Test access to a client's internals for the queue tests. */
public final class QueueAccess {
    private QueueAccess() {
    }

    /** Queues someone in this client waits to claim from right now ({@code Queue.claim(n, wait)}). */
    public static int claimWaiters(Sluice sluice) {
        return sluice.engine().jobStore().claimWaiters();
    }

    /** Starts the client's session connection (LISTEN) if it is not running, and says whether it is up. */
    public static boolean sessionHealthy(Sluice sluice) {
        return sluice.engine().session().healthy();
    }
}
