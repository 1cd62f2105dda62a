package dev.sluice;

/** Test access to a client's gauge refresh for the metrics tests. */
public final class MetricsAccess {
    private MetricsAccess() {
    }

    /** Refreshes the client's gauges now, in the caller's thread (the client must have a registry). */
    public static void refresh(Sluice sluice) {
        sluice.engine().meterRefresh().refresh();
    }

    /** Whether the client's last refresh took its figures itself because no manager was live. */
    public static boolean ownFigures(Sluice sluice) {
        return sluice.engine().meterRefresh().ownFigures();
    }

    /** Whether the client runs a gauge refresh at all (only with a registry). */
    public static boolean refreshes(Sluice sluice) {
        return sluice.engine().meterRefresh() != null;
    }
}
