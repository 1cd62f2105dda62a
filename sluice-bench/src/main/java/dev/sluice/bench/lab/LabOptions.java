package dev.sluice.bench.lab;

import java.time.Duration;

/**
 * What a reliability-lab run does. Fault intervals of {@link Duration#ZERO} (or a rate of 0) turn
 * the fault off.
 *
 * @param databaseUrl     a server to use instead of the embedded one (then PostgreSQL restarts cannot be injected)
 * @param duration        how long producers run
 * @param drainTimeout    how long to wait for every group to resolve everything after producers stop
 * @param producers       producer processes
 * @param consumers       consumer processes (each consumes every group)
 * @param rate            messages per second per producer
 * @param failureRate     share of first deliveries whose handler fails (some of those fail for good)
 * @param hangRate        share of first deliveries whose handler hangs past the lease
 * @param killEvery       SIGKILL a random consumer process this often (it is restarted)
 * @param terminateEvery  pg_terminate_backend every lab connection this often
 * @param restartAt       restart the embedded PostgreSQL once, this long into the run
 * @param longTransactions share of messages produced in long producer transactions (some rolled back)
 * @param leaseTimeout    the consumers' lease
 * @param seed            randomness of the run
 * @param pinEvery        this often, an unrelated transaction allocates an xid and holds it idle (no table
 *                        touched) for {@code pinFor}, then rolls back
 * @param pinFor          how long each such transaction holds its xid: longer than the lease (2–3 ×) to matter;
 *                        shorter than {@code pinEvery}
 * @param engines         the engines of the run ({@link LabEngines#NAMES}); {@code streams} is always among them
 * @param jobRate         per producer process, jobs the queue engine enqueues per second
 */
public record LabOptions(String databaseUrl, Duration duration, Duration drainTimeout, int producers, int consumers,
                         int rate, double failureRate, double hangRate, Duration killEvery, Duration terminateEvery,
                         Duration restartAt, double longTransactions, Duration leaseTimeout, long seed,
                         Duration pinEvery, Duration pinFor, java.util.Set<String> engines, int jobRate) {

    /** A run of the stream engine alone. */
    public LabOptions(String databaseUrl, Duration duration, Duration drainTimeout, int producers, int consumers,
                      int rate, double failureRate, double hangRate, Duration killEvery, Duration terminateEvery,
                      Duration restartAt, double longTransactions, Duration leaseTimeout, long seed,
                      Duration pinEvery, Duration pinFor) {
        this(databaseUrl, duration, drainTimeout, producers, consumers, rate, failureRate, hangRate, killEvery, terminateEvery,
                restartAt, longTransactions, leaseTimeout, seed, pinEvery, pinFor, java.util.Set.of(LabEngines.STREAMS), 20);
    }

    public LabOptions {
        java.util.Objects.requireNonNull(engines, "engines");
        java.util.Set<String> named = new java.util.LinkedHashSet<>();
        for (String n : LabEngines.NAMES) {
            if (n.equals(LabEngines.STREAMS) || engines.contains(n)) {
                named.add(n);
            }
        }
        for (String n : engines) {
            if (!LabEngines.NAMES.contains(n)) {
                throw new IllegalArgumentException("unknown lab engine '" + dev.sluice.bench.lab.LabOptions.clean(n)
                        + "': one of " + LabEngines.NAMES);
            }
        }
        engines = java.util.Collections.unmodifiableSet(named);
        if (jobRate < 1) {
            throw new IllegalArgumentException("the job rate must be at least 1 per second");
        }
        java.util.Objects.requireNonNull(pinEvery, "pinEvery");
        java.util.Objects.requireNonNull(pinFor, "pinFor");
        if (pinEvery.isNegative() || pinFor.isNegative()) {
            throw new IllegalArgumentException("the unrelated transaction's interval and hold must not be negative");
        }
        if (!pinEvery.isZero() && (pinFor.isZero() || pinFor.compareTo(pinEvery) >= 0)) {
            throw new IllegalArgumentException("an unrelated transaction every " + pinEvery + " must hold its xid for"
                    + " more than 0 and less than that interval (got " + pinFor + ")");
        }
        if (producers < 1 || consumers < 1) {
            throw new IllegalArgumentException("at least one producer and one consumer process");
        }
        if (rate < 1) {
            throw new IllegalArgumentException("rate must be at least 1 message/s");
        }
        for (double r : new double[] {failureRate, hangRate, longTransactions}) {
            if (r < 0 || r > 0.5) {
                throw new IllegalArgumentException("rates must be between 0 and 0.5");
            }
        }
    }

    /**
     * A short run with every fault on: what CI runs. Unrelated transactions hold an xid for 7 s (2.3 leases) at
     * 11, 22 and 33 s, clear of the restart at 20 s.
     */
    public static LabOptions smoke() {
        return new LabOptions(null, Duration.ofSeconds(45), Duration.ofSeconds(120), 1, 3, 60, 0.05, 0.01,
                Duration.ofSeconds(12), Duration.ofSeconds(15), Duration.ofSeconds(20), 0.1, Duration.ofSeconds(3), 7,
                Duration.ofSeconds(11), Duration.ofSeconds(7), java.util.Set.copyOf(LabEngines.NAMES), 20);
    }

    /** The same options with other engines. */
    public LabOptions withEngines(java.util.Set<String> names) {
        return new LabOptions(databaseUrl, duration, drainTimeout, producers, consumers, rate, failureRate, hangRate, killEvery,
                terminateEvery, restartAt, longTransactions, leaseTimeout, seed, pinEvery, pinFor, names, jobRate);
    }

    /** A name as shown in an error: at most 40 characters, control characters as '?'. */
    static String clean(String s) {
        String t = s.length() > 40 ? s.substring(0, 40) + "…" : s;
        return t.replaceAll("\\p{Cntrl}", "?");
    }

    public boolean kills() {
        return !killEvery.isZero();
    }

    public boolean terminations() {
        return !terminateEvery.isZero();
    }

    public boolean restart() {
        return !restartAt.isZero();
    }

    /** Whether unrelated long transactions pin the xmin during the run. */
    public boolean pins() {
        return !pinEvery.isZero();
    }
}
