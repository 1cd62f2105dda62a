package dev.sluice.bench.lab;

import dev.sluice.GroupConfig;
import dev.sluice.GroupInfo;
import dev.sluice.Sluice;
import dev.sluice.embedded.EmbeddedPostgresServer;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Consumer;

/**
 * The reliability lab's orchestrator: starts producers and consumers as separate OS processes
 * against the embedded server (or a given URL), fires faults on schedule — SIGKILL of consumers
 * (restarted), {@code pg_terminate_backend} of every lab connection, a PostgreSQL restart, unrelated
 * transactions holding an xid past the lease ({@link UnrelatedXidFault}) — then drains
 * and lets {@link LabChecker} classify every message. The verdict is {@code pass} only when nothing is
 * lost or unexpected, nothing is unbucketed, no ordered or partitioned key was delivered out of order and no
 * key of the partitioned group ran in two processes at once; it is
 * {@code unknown} when nothing was produced, the drain timed out or a requested fault never fired.
 */
public final class Lab {

    /** The outcome of a run. */
    public record Result(String verdict, LabChecker.Check check, Map<String, Integer> faultsFired,
                         Map<String, Double> redeliverySeconds, Map<String, Double> instanceTakeoverSeconds,
                         long maintenancePasses, double drainSeconds, String reason, Path workDir,
                         Map<String, LabEngine.Section> sections, long partitionsDropped, double checkSeconds,
                         Map<String, Integer> workerExits, List<Map<String, Object>> serverStatements,
                         Map<String, Double> redeliveryFromKillSeconds, long killsLeavingNoConsumer,
                         Double redeliveryKeyHeldMaxSeconds, Map<String, Double> cpuCores, String classArchive) {

        /** The JSON summary line (BENCHMARKS.md § JSON output, scenario {@code lab}). */
        public Map<String, Object> summary(LabOptions o) {
            return LabSummary.of(this, o);
        }
    }

    /** How the line that names a kept embedded database starts. */
    static final String KEPT = "lab: database kept in ";

    private final LabOptions o;
    private final List<LabEngine> engines;
    private final Map<String, LabEngine.Section> sections = new LinkedHashMap<>();
    private final Consumer<String> progress;
    private final Random random;
    private final Map<String, Integer> fired = new LinkedHashMap<>();
    private Path work;
    private String url;
    private EmbeddedPostgresServer server;
    private Path dataDir;
    private int port;
    private InstanceWatch instanceWatch;
    private LabProcesses processes;
    /** What loaded the server, per statement (read after the drain; empty without pg_stat_statements). */
    private List<Map<String, Object>> serverStatements = List.of();
    private boolean keepData;
    private boolean classArchive = true;
    /** Where the CPU went while the faults fired ({@link LabCpu#cores}). */
    private Map<String, Double> cpuCores = Map.of();

    public Lab(LabOptions options, Consumer<String> progress) {
        this.o = options;
        this.engines = LabEngines.create(options.engines());
        this.progress = progress;
        this.random = new Random(options.seed());
    }

    /** Keeps the embedded database after a passing run too (a run that does not pass always keeps it). */
    public Lab keepData(boolean keep) {
        this.keepData = keep;
        return this;
    }

    /**
     * Whether the worker JVMs map a class archive recorded from the first consumer (on by default; see
     * {@link LabClassArchive}).
     */
    public Lab classArchive(boolean on) {
        this.classArchive = on;
        return this;
    }

    public Result run() throws Exception {
        work = Files.createTempDirectory("sluice-lab-");
        Result result = null;
        try {
            startServer();
            long streamId = setUp();
            instanceWatch = new InstanceWatch(() -> connect("sluice-lab-orchestrator"),
                    o.leaseTimeout().plusSeconds(30));
            processes = new LabProcesses(o, work, url, progress, classArchive);
            processes.start();
            progress.accept("lab: " + o.producers() + " producer(s), " + o.consumers() + " consumer(s), groups "
                    + LabGroups.ALL + ", " + o.duration().toSeconds() + " s; work dir " + work);
            faults();
            processes.awaitProducers();
            long drainStart = System.nanoTime();
            boolean drained = drain(streamId);
            double drainSeconds = (System.nanoTime() - drainStart) / 1e9;
            processes.stopConsumers();
            LabChecker.Check check;
            List<LabTimeline.Redelivery> redeliveries;
            long killsLeavingNoConsumer;
            long maintenancePasses;
            long partitionsDropped;
            long checkStart = System.nanoTime();
            try (Connection c = connect("sluice-lab-checker")) {
                check = LabChecker.check(c, streamId);
                List<LabTimeline.Running> running = LabTimeline.running(c);
                redeliveries = LabTimeline.redeliveries(c, running);
                killsLeavingNoConsumer = LabTimeline.killsLeavingNoConsumer(c, running);
                maintenancePasses = LabChecker.maintenancePasses(c);
                partitionsDropped = LabChecker.partitionsDropped(c);
                for (LabEngine e : engines) {
                    sections.put(e.name(), e.check(c, drained));
                }
            }
            double checkSeconds = Math.round((System.nanoTime() - checkStart) / 1e8) / 10.0;
            try (Connection c = connect("sluice-lab-checker")) {
                serverStatements = ServerStatements.top(c);
            }
            progress.accept("lab: checked " + check.produced() + " messages in " + checkSeconds + " s");
            result = verdict(check, redeliveries, instanceWatch.results(), maintenancePasses, drained, drainSeconds,
                    partitionsDropped, checkSeconds, killsLeavingNoConsumer);
            return result;
        } finally {
            if (instanceWatch != null) {
                instanceWatch.close();
            }
            if (processes != null) {
                processes.stopAll();
            }
            if (server != null) {
                server.close();
                // The embedded database (tens of MB) is kept only when the run did not pass, to investigate
                // with; the processes' logs stay in the work directory either way.
                if (result != null && "pass".equals(result.verdict()) && dataDir != null && !keepData) {
                    deleteTree(dataDir);
                } else if (dataDir != null) {
                    // Its superuser's password is in the data directory (0600), where `db psql` finds it.
                    progress.accept(KEPT + dataDir + "; open it with: sluice db psql --data-dir " + dataDir);
                }
            }
        }
    }

    /** Deletes a directory tree, best effort (also the tests' way to remove a kept database). */
    static void deleteTree(Path dir) {
        try (java.util.stream.Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException | RuntimeException e) {
            // best effort: a leftover directory in the temp folder is harmless
        }
    }

    /**
     * The verdict and its reason: {@code unknown} when the drain timed out (undrained messages cannot be told
     * from lost ones, so only what stays wrong whatever comes later — unexpected deliveries, order
     * violations — fails then), when nothing was produced, or when a requested fault never fired
     * ({@code missingFaults} non-null); {@code fail} when anything that must be zero is not, or when a killed
     * consumer's message was redelivered later than the bound ({@code lateRedelivery} non-null); else {@code pass}.
     */
    static String[] decide(LabChecker.Check check, boolean drained, long drainTimeoutSeconds, String missingFaults,
                           String lateRedelivery) {
        String reason = failure(check);
        boolean wrongForGood = check.unexpected() > 0 || check.orderViolations() > 0 || check.keyOverlaps() > 0
                || check.uncountedRedeliveries() > 0;
        if (!drained && !wrongForGood) {
            if (lateRedelivery != null) {
                return new String[] {"fail", lateRedelivery};
            }
            return new String[] {"unknown", "the drain timed out after " + drainTimeoutSeconds + " s"
                    + (reason == null ? "" : " (not resolved yet: " + reason + ")")};
        }
        if (reason == null) {
            reason = lateRedelivery;
        }
        if (reason != null) {
            return new String[] {"fail", reason};
        }
        if (check.produced() == 0) {
            return new String[] {"unknown", "nothing was produced"};
        }
        if (missingFaults != null) {
            return new String[] {"unknown", "a requested fault never fired: " + missingFaults};
        }
        return new String[] {"pass", null};
    }

    /**
     * The faults fired so far ({@code kind=count}) when a fault the options ask for never fired, else null. The
     * restart is asked for only on the embedded server.
     */
    static String missingFaults(LabOptions o, Map<String, Integer> fired) {
        boolean missing = (o.kills() && fired.getOrDefault("kill", 0) == 0)
                || (o.terminations() && fired.getOrDefault("terminate", 0) == 0)
                || (o.restart() && fired.getOrDefault("restart", 0) == 0)
                || (o.pins() && fired.getOrDefault(UnrelatedXidFault.KIND, 0) == 0);
        return missing ? fired.toString() : null;
    }

    /** {@code fail} when the check found anything that must be zero, else null (the caller decides pass or unknown). */
    public static String failure(LabChecker.Check check) {
        if (check.lost() > 0 || check.unexpected() > 0 || check.unbucketed() > 0 || check.orderViolations() > 0
                || check.keyOverlaps() > 0 || check.uncountedRedeliveries() > 0) {
            return "lost " + check.lost() + ", unexpected " + check.unexpected() + ", unbucketed " + check.unbucketed()
                    + ", order violations " + check.orderViolations() + " " + check.orderViolationsByGroup()
                    + ", key overlaps " + check.keyOverlaps()
                    + (check.keyOverlapExample() == null ? "" : " (" + check.keyOverlapExample() + ")")
                    + ", uncounted redeliveries " + check.uncountedRedeliveries()
                    + (check.uncountedExample() == null ? "" : " (" + check.uncountedExample() + ")");
        }
        return null;
    }

    private Result verdict(LabChecker.Check check, List<LabTimeline.Redelivery> redeliveries,
                           Map<String, Double> takeovers, long maintenancePasses, boolean drained, double drainSeconds,
                           long partitionsDropped, double checkSeconds, long killsLeavingNoConsumer) {
        double bound = redeliveryBoundSeconds(o);
        // The bound applies to the time another consumer process was running its groups and the message's key was not
        // held by another message's call in a group that runs one at a time (LabTimeline.covered).
        List<LabTimeline.Redelivery> late = redeliveries.stream()
                .filter(r -> r.coveredSeconds() != null && r.coveredSeconds() > bound).toList();
        List<LabTimeline.Redelivery> slowest = redeliveries.stream().filter(r -> r.coveredSeconds() != null)
                .sorted(java.util.Comparator.comparingDouble(LabTimeline.Redelivery::coveredSeconds).reversed())
                .limit(late.isEmpty() ? 3 : late.size()).toList();
        for (LabTimeline.Redelivery r : slowest) {
            progress.accept(String.format(java.util.Locale.ROOT, "lab: %s redelivery after the kill of %s: group %s,"
                    + " message %d (attempt %d, held %.1f s before the kill) started again after %.1f s by %s"
                    + " (%.1f s of them with another consumer running and the key free)",
                    r.coveredSeconds() > bound ? "LATE" : "slowest", r.kill(), r.group(), r.messageId(), r.attempt(), r.heldSeconds(),
                    r.redeliverySeconds(), r.redeliveredBy(), r.coveredSeconds()));
        }
        String lateReason = late.isEmpty() ? null : late.size() + " message(s) held by a killed consumer were redelivered"
                + " later than the lease + 5 s (" + bound + " s) of another consumer running; the worst after "
                + String.format(java.util.Locale.ROOT, "%.1f s", late.stream()
                        .mapToDouble(LabTimeline.Redelivery::coveredSeconds).max().orElse(0));
        long lateTakeovers = takeovers.values().stream().filter(s -> s < 0 || s > bound).count();
        if (lateTakeovers > 0) {
            String instances = lateTakeovers + " killed process(es) kept live fleet instances (or the manager) longer than"
                    + " the lease + 5 s (" + bound + " s): " + takeovers;
            lateReason = lateReason == null ? instances : lateReason + "; " + instances;
        }
        progress.accept("lab: fleet instances of killed processes taken over after (s): " + takeovers);
        String[] v = decide(check, drained, o.drainTimeout().toSeconds(), missingFaults(o, fired), lateReason);
        String verdict = v[0];
        String reason = v[1];
        String engineFailures = engineFailures(sections);
        if (engineFailures != null) {
            reason = "fail".equals(verdict) ? reason + "; " + engineFailures : engineFailures;
            verdict = "fail";
        }
        return new Result(verdict, check, Map.copyOf(fired), LabTimeline.redeliverySeconds(redeliveries, LabTimeline.Redelivery::coveredSeconds), takeovers, maintenancePasses,
                drainSeconds, reason, work, Map.copyOf(sections), partitionsDropped, checkSeconds, processes.exits(),
                serverStatements, LabTimeline.redeliverySeconds(redeliveries, LabTimeline.Redelivery::redeliverySeconds), killsLeavingNoConsumer,
                redeliveries.stream().map(LabTimeline.Redelivery::keyHeldSeconds).filter(s -> s != null && s > 0)
                        .max(Double::compare).orElse(null), cpuCores, processes.classArchive());
    }

    /** The engines' failures ({@code queue: …; lock: …}), or null when none failed. */
    static String engineFailures(Map<String, LabEngine.Section> sections) {
        List<String> failures = new ArrayList<>();
        sections.forEach((name, section) -> {
            if (section.failure() != null) {
                failures.add(name + ": " + section.failure());
            }
        });
        return failures.isEmpty() ? null : String.join("; ", failures);
    }

    /** The redelivery bound of the design: a killed consumer's messages start again within the lease + 5 s. */
    public static double redeliveryBoundSeconds(LabOptions o) {
        return o.leaseTimeout().toMillis() / 1000.0 + 5.0;
    }

    // ------------------------------------------------------------------ server and set-up

    private void startServer() throws IOException {
        if (o.databaseUrl() != null) {
            url = o.databaseUrl();
            return;
        }
        dataDir = work.resolve("pgdata");
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        server = EmbeddedPostgresServer.start(dataDir, port);
        url = server.jdbcUrl();
        try {
            server = ServerStatements.preload(server, dataDir, port, connect("sluice-lab-orchestrator"));
        } catch (SQLException | InterruptedException e) {
            throw new IOException("could not load pg_stat_statements into the lab's server", e);
        }
        url = server.jdbcUrl();
    }

    private long setUp() throws Exception {
        try (Connection c = connect("sluice-lab-orchestrator"); Statement s = c.createStatement()) {
            s.execute(Ledger.ddl());
            for (LabEngine e : engines) {
                s.execute(e.ddl());
            }
        }
        try (Connection c = connect("sluice-lab-orchestrator")) {
            ServerStatements.install(c);
        }
        org.postgresql.ds.PGSimpleDataSource ds = new org.postgresql.ds.PGSimpleDataSource();
        ds.setUrl(url);
        try (Sluice sluice = Sluice.builder().dataSource(ds).schema(Ledger.SLUICE_SCHEMA).build()) {
            // Retention on, and short TTLs, so the manager's janitor (every 2 s in whichever process holds it) drops log
            // partitions, sweeps delivery-log rows, dead letters and empty compaction heads while the faults fire: a
            // partition holds about 5 s of messages and goes some 35 s after it filled (its messages 15 s old, its dead
            // letters swept 20 s after they went dead). Idempotency keys outlive the run (re-sends must stay duplicates).
            long id = sluice.stream(Ledger.STREAM).register(dev.sluice.StreamConfig.builder()
                    .partitionSize(partitionSize(o)).retention(Duration.ofSeconds(15))
                    .deliveryLogRetention(Duration.ofSeconds(10)).emptyCompactionHeadTtl(Duration.ofSeconds(10))
                    .idempotencyKeyTtl(Duration.ofHours(2)).build()).id();
            for (Map.Entry<String, GroupConfig> g : LabGroups.configs().entrySet()) {
                sluice.stream(Ledger.STREAM).consumerGroup(g.getKey()).register(g.getValue());
            }
            for (LabEngine e : engines) {
                e.setUp(sluice);
            }
            return id;
        }
    }

    /** Ids per log partition: about 5 s of the run's messages, at least 500. */
    static long partitionSize(LabOptions o) {
        return Math.max(500, 5L * o.rate() * o.producers());
    }

    private Connection connect(String applicationName) throws SQLException {
        java.util.Properties p = new java.util.Properties();
        p.setProperty("ApplicationName", applicationName);
        return DriverManager.getConnection(url, p);
    }

    // ------------------------------------------------------------------ faults

    private void faults() throws Exception {
        long start = System.nanoTime();
        long end = start + o.duration().toNanos();
        long nextKill = o.kills() ? start + o.killEvery().toNanos() : Long.MAX_VALUE;
        long nextTerminate = o.terminations() ? start + o.terminateEvery().toNanos() : Long.MAX_VALUE;
        long restartAt = o.restart() && server != null ? start + o.restartAt().toNanos() : Long.MAX_VALUE;
        LabCpu cpu = new LabCpu(() -> dataDir == null ? null : dataDir.resolve("postmaster.pid"), processes::workers);
        try (UnrelatedXidFault pins = new UnrelatedXidFault(url, o, start, end, this::record,
                () -> connect("sluice-lab-orchestrator"), progress)) {
            while (System.nanoTime() < end) {
                long now = System.nanoTime();
                if (now >= nextKill) {
                    kill();
                    nextKill += o.killEvery().toNanos();
                }
                if (now >= nextTerminate) {
                    terminate();
                    nextTerminate += o.terminateEvery().toNanos();
                }
                if (now >= restartAt) {
                    restart();
                    restartAt = Long.MAX_VALUE;
                }
                pins.tick(now);
                processes.replaceExited();
                processes.tick(now);
                cpu.tick(now);
                Thread.sleep(100);
            }
        }
        cpu.sample(System.nanoTime());
        cpuCores = cpu.cores();
        progress.accept("lab: CPU while the faults fired, in cores of " + Runtime.getRuntime().availableProcessors() + ": " + cpuCores);
    }

    private void kill() throws Exception {
        String victim = processes.killConsumer(random);
        // The instant it was gone: the checker ends its unfinished calls there and measures redeliveries from it.
        record("kill", victim, java.time.Instant.now());
        instanceWatch.killed(victim);
        progress.accept("lab: SIGKILL consumer " + victim);
        processes.addConsumer();
    }

    private void terminate() throws SQLException {
        int n;
        try (Connection c = connect("sluice-lab-orchestrator"); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                     + " WHERE application_name LIKE 'sluice-lab-worker-%' AND pid <> pg_backend_pid()")) {
            rs.next();
            n = rs.getInt(1);
        }
        record("terminate", n + " backends");
        progress.accept("lab: pg_terminate_backend of " + n + " lab connections");
    }

    private void restart() throws Exception {
        server.close();
        Thread.sleep(1_000);
        server = EmbeddedPostgresServer.start(dataDir, port);
        record("restart", "PostgreSQL stopped and started on port " + port);
        progress.accept("lab: PostgreSQL restarted");
    }

    private void record(String kind, String detail) throws SQLException {
        record(kind, detail, java.time.Instant.now());
    }

    private void record(String kind, String detail, java.time.Instant at) throws SQLException {
        fired.merge(kind, 1, Integer::sum);
        for (int attempt = 0; ; attempt++) {
            try (Connection c = connect("sluice-lab-orchestrator");
                 PreparedStatement ps = c.prepareStatement("INSERT INTO sluice_lab.fault (kind, detail, at) VALUES (?, ?, ?)")) {
                ps.setString(1, kind);
                ps.setString(2, detail);
                ps.setTimestamp(3, java.sql.Timestamp.from(at));
                ps.executeUpdate();
                return;
            } catch (SQLException e) {
                if (attempt > 50) {
                    throw e;
                }
                try {
                    Thread.sleep(200);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    // ------------------------------------------------------------------ drain and stop

    /** Waits until every group has resolved everything: cursor at the head, no ready/deferred/inflight rows. */
    private boolean drain(long streamId) throws Exception {
        org.postgresql.ds.PGSimpleDataSource ds = new org.postgresql.ds.PGSimpleDataSource();
        ds.setUrl(url);
        long deadline = System.nanoTime() + o.drainTimeout().toNanos();
        try (Sluice sluice = Sluice.builder().dataSource(ds).schema(Ledger.SLUICE_SCHEMA).build()) {
            while (System.nanoTime() < deadline) {
                boolean done = true;
                for (GroupInfo g : sluice.stream(Ledger.STREAM).consumerGroups()) {
                    done &= g.committed() >= g.head() && g.ready() == 0 && g.deferred() == 0 && g.inflight() == 0
                            && g.openRanges() == 0;
                }
                if (done) {
                    try (Connection c = connect("sluice-lab-orchestrator")) {
                        for (LabEngine e : engines) {
                            done &= e.drained(c);
                        }
                    } catch (SQLException e) {
                        done = false; // look again
                    }
                }
                if (done) {
                    return true;
                }
                processes.replaceExited();
                Thread.sleep(500);
            }
        }
        return false;
    }

    /** A duration in whole seconds for messages. */
    static String seconds(Duration d) {
        return d.toSeconds() + "s";
    }
}
