package dev.sluice;

/** Test access to a client's internals for the run tests. */
public final class RunsAccess {
    private RunsAccess() {
    }

    /** Jobs someone in this client awaits right now. */
    public static int awaitedJobs(Sluice sluice) {
        return sluice.engine().jobStore().awaitedJobs();
    }
}
