package dev.sluice.bench.lab;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Where the machine's CPU went while the lab ran its faults (docs/reliability-lab.md, "Where the CPU goes"): about once
 * a second ({@link #tick}, on the orchestrator's loop) it reads the total CPU time of every process of the run and adds
 * each one's growth to its part — the PostgreSQL server (the postmaster and every process under it; embedded server
 * only), the consumer processes in their first {@link #STARTING} (a JVM that starts every kill interval: class loading
 * and the client compiler) and after, the producer processes, and the orchestrator. A run that cannot keep its rate
 * shows here whether the machine was full. Sampled once a second, a process's last second before it ends is not
 * counted (a killed consumer's, a terminated backend's): the figures err low, never high.
 */
final class LabCpu {
    static final Duration STARTING = Duration.ofSeconds(30);
    static final String SERVER = "server";
    static final String CONSUMERS_STARTING = "consumers_first_30s";
    static final String CONSUMERS = "consumers";
    static final String PRODUCERS = "producers";
    static final String ORCHESTRATOR = "orchestrator";
    static final String TOTAL = "total";
    private static final long EVERY_NANOS = 1_000_000_000L;

    /** A worker process of the run: whether it is a consumer, and its handle. */
    record Worker(boolean consumer, ProcessHandle handle) {
    }

    private final Supplier<Path> postmasterPidFile;
    private final Supplier<List<Worker>> workers;
    /** CPU time last read per process id. */
    private final Map<Long, Long> last = new HashMap<>();
    private final Map<String, Long> byPart = new LinkedHashMap<>();
    private long firstNanos;
    private long lastNanos;

    /**
     * @param postmasterPidFile the embedded server's {@code postmaster.pid} (null supplier result: no server to
     *                          read, as with {@code --database-url})
     * @param workers           the worker processes running now
     */
    LabCpu(Supplier<Path> postmasterPidFile, Supplier<List<Worker>> workers) {
        this.postmasterPidFile = postmasterPidFile;
        this.workers = workers;
        for (String part : List.of(SERVER, CONSUMERS_STARTING, CONSUMERS, PRODUCERS, ORCHESTRATOR)) {
            byPart.put(part, 0L);
        }
    }

    /** Samples when a second has passed since the last sample (the first call samples a baseline). */
    void tick(long nowNanos) {
        if (firstNanos != 0 && nowNanos - lastNanos < EVERY_NANOS) {
            return;
        }
        sample(nowNanos);
    }

    /** Reads every process of the run once; the first sample only sets where each process's time starts. */
    void sample(long nowNanos) {
        boolean baseline = firstNanos == 0;
        Map<Long, String> parts = new HashMap<>();
        postmaster().ifPresent(pm -> {
            parts.put(pm.pid(), SERVER);
            pm.descendants().forEach(d -> parts.put(d.pid(), SERVER));
        });
        Instant now = Instant.now();
        for (Worker w : workers.get()) {
            String part = PRODUCERS;
            if (w.consumer()) {
                Instant started = w.handle().info().startInstant().orElse(Instant.EPOCH);
                part = Duration.between(started, now).compareTo(STARTING) < 0 ? CONSUMERS_STARTING : CONSUMERS;
            }
            parts.put(w.handle().pid(), part);
        }
        parts.put(ProcessHandle.current().pid(), ORCHESTRATOR);
        Map<Long, Long> seen = new HashMap<>();
        parts.forEach((pid, part) -> ProcessHandle.of(pid).flatMap(h -> h.info().totalCpuDuration()).ifPresent(cpu -> {
            long nanos = cpu.toNanos();
            seen.put(pid, nanos);
            Long before = last.get(pid);
            // A process first seen after the baseline started since the last sample: all of its time is the run's.
            long grown = before == null ? (baseline ? 0 : nanos) : Math.max(0, nanos - before);
            byPart.merge(part, grown, Long::sum);
        }));
        last.clear();
        last.putAll(seen);
        if (baseline) {
            firstNanos = nowNanos;
        }
        lastNanos = nowNanos;
    }

    private Optional<ProcessHandle> postmaster() {
        Path file = postmasterPidFile.get();
        if (file == null) {
            return Optional.empty();
        }
        try {
            // postmaster.pid: its first line is the postmaster's process id (absent while the server is down).
            String first = Files.readAllLines(file, StandardCharsets.US_ASCII).stream().findFirst().orElse("").trim();
            return first.isEmpty() ? Optional.empty() : ProcessHandle.of(Long.parseLong(first));
        } catch (IOException | NumberFormatException e) {
            return Optional.empty();
        }
    }

    /**
     * Cores used per part over the sampled time (each part's CPU seconds ÷ the seconds between the first and the last
     * sample), rounded to 0.01, with their {@value #TOTAL}; empty before two samples.
     */
    Map<String, Double> cores() {
        Map<String, Double> out = new LinkedHashMap<>();
        double seconds = (lastNanos - firstNanos) / 1e9;
        if (firstNanos == 0 || seconds <= 0) {
            return out;
        }
        long total = 0;
        for (Map.Entry<String, Long> e : byPart.entrySet()) {
            out.put(e.getKey(), Math.round(e.getValue() / 1e9 / seconds * 100) / 100.0);
            total += e.getValue();
        }
        out.put(TOTAL, Math.round(total / 1e9 / seconds * 100) / 100.0);
        return out;
    }
}
