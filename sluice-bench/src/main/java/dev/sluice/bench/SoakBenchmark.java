package dev.sluice.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The {@code soak} benchmark: storage stays bounded. One producer sends R messages per second (default 2,000),
 * each with its own idempotency key, for D (default 10 min) into a stream with a short retention (default 1 min;
 * the idempotency-key TTL and the delivery-log retention are the same, and partitions hold about
 * R × retention ÷ 4 ids, so several fill and are dropped within the run), while one consumer group consumes and
 * the client's elected manager runs the janitor every {@link #MAINTENANCE_INTERVAL}. Every sample interval
 * (default 1 min) it records a {@link Row}: delivered/s, the produce → handler latency (p50/p99; the produce time
 * travels in the payload), the bytes of the stream's tables and of the control plane, dead tuples, partitions.
 *
 * <p>With a pin ({@link Options#pinXminAt()}, {@link Options#pinXminFor()}) a {@link SnapshotPin} holds the
 * database's vacuum horizon from T for P while everything goes on; the p99 and the delivered rate are compared
 * before, during and after it.
 *
 * <p>{@code lost} counts messages whose produce committed but that no handler received by the end (producing
 * stops, then the consumer drains for up to {@link #DRAIN_LIMIT}); a message that retention dropped before its
 * delivery counts as lost. There is no reference: the targets are absolute (docs/benchmarks.md, "soak").
 */
public final class SoakBenchmark {
    /** The scenario name in results. */
    public static final String SCENARIO = "soak";
    /** The unit of {@code ours}: the growth of the stored bytes. */
    public static final String UNIT = "bytes_end/bytes_steady";
    /** How often the elected manager runs a maintenance pass in the soak (the client's default is 60 s). */
    public static final Duration MAINTENANCE_INTERVAL = Duration.ofSeconds(5);
    /** The longest wait for the consumer to catch up after producing stopped. */
    static final Duration DRAIN_LIMIT = Duration.ofSeconds(60);

    /**
     * What to run.
     *
     * @param databaseUrl  JDBC URL of the server; {@code null} starts a temporary embedded one
     * @param rate         messages per second (default 2,000)
     * @param duration     how long producing goes on (default 10 min)
     * @param retention    the stream's retention, idempotency-key TTL and delivery-log retention (default 1 min)
     * @param payloadBytes payload size, at least 8 (the produce time) (default 1024)
     * @param sampleEvery  how often a row is recorded (default 1 min)
     * @param pinXminAt    when the snapshot pin starts, from the start of producing (null: no pin)
     * @param pinXminFor   how long it is held (null: no pin)
     * @param pinWindow    the length of the before and after windows the pin is compared with; the after window
     *                     starts this long after the pin ended (default 60 s: the p99 must be back by then)
     */
    public record Options(String databaseUrl, int rate, Duration duration, Duration retention, int payloadBytes,
                          Duration sampleEvery, Duration pinXminAt, Duration pinXminFor, Duration pinWindow) {
        public Options {
            Objects.requireNonNull(duration, "duration");
            Objects.requireNonNull(retention, "retention");
            Objects.requireNonNull(sampleEvery, "sampleEvery");
            Objects.requireNonNull(pinWindow, "pinWindow");
            if (rate < 1 || rate > 100_000) {
                throw new IllegalArgumentException("rate must be between 1 and 100000 msgs/s (got " + rate + ")");
            }
            if (duration.compareTo(Duration.ofSeconds(5)) < 0 || duration.compareTo(Duration.ofHours(24)) > 0) {
                throw new IllegalArgumentException("duration must be between 5s and 24h (got " + duration + ")");
            }
            if (retention.compareTo(Duration.ofSeconds(1)) < 0) {
                throw new IllegalArgumentException("retention must be at least 1s (got " + retention + ")");
            }
            if (payloadBytes < 8 || payloadBytes > 1 << 20) {
                throw new IllegalArgumentException("payload bytes must be between 8 and 1048576 (got " + payloadBytes + ")");
            }
            if (sampleEvery.compareTo(Duration.ofSeconds(1)) < 0) {
                throw new IllegalArgumentException("the sample interval must be at least 1s (got " + sampleEvery + ")");
            }
            if ((pinXminAt == null) != (pinXminFor == null)) {
                throw new IllegalArgumentException("--pin-xmin-at and --pin-xmin-for go together");
            }
            if (pinXminAt != null) {
                if (pinXminAt.isNegative() || pinXminFor.compareTo(Duration.ofSeconds(1)) < 0) {
                    throw new IllegalArgumentException("the pin must start at 0 or later and last at least 1s (got at "
                            + pinXminAt + " for " + pinXminFor + ")");
                }
                if (pinXminAt.plus(pinXminFor).compareTo(duration) > 0) {
                    throw new IllegalArgumentException("the pin (at " + pinXminAt + " for " + pinXminFor
                            + ") must end by the end of producing (" + duration + ")");
                }
            }
            if (pinWindow.compareTo(Duration.ofSeconds(1)) < 0) {
                throw new IllegalArgumentException("the pin window must be at least 1s (got " + pinWindow + ")");
            }
            if (databaseUrl != null && databaseUrl.isBlank()) {
                databaseUrl = null;
            }
        }

        /** The defaults: embedded, 2,000 msgs/s for 10 min, 1 min retention, 1 KB, a row a minute, no pin. */
        public static Options defaults() {
            return new Options(null, 2000, Duration.ofMinutes(10), Duration.ofMinutes(1), 1024, Duration.ofMinutes(1),
                    null, null, Duration.ofSeconds(60));
        }

        /** Whether the run pins the vacuum horizon. */
        public boolean pinned() {
            return pinXminAt != null;
        }

        /** Ids per log partition: about rate × retention ÷ 4, at least 100. */
        public long partitionSize() {
            return Math.max(100, Math.round(rate * (retention.toMillis() / 1000.0) / 4));
        }

        public Options withDatabaseUrl(String url) {
            return new Options(url, rate, duration, retention, payloadBytes, sampleEvery, pinXminAt, pinXminFor, pinWindow);
        }

        public Options withRate(int n) {
            return new Options(databaseUrl, n, duration, retention, payloadBytes, sampleEvery, pinXminAt, pinXminFor, pinWindow);
        }

        public Options withDuration(Duration d) {
            return new Options(databaseUrl, rate, d, retention, payloadBytes, sampleEvery, pinXminAt, pinXminFor, pinWindow);
        }

        public Options withRetention(Duration d) {
            return new Options(databaseUrl, rate, duration, d, payloadBytes, sampleEvery, pinXminAt, pinXminFor, pinWindow);
        }

        public Options withPayloadBytes(int n) {
            return new Options(databaseUrl, rate, duration, retention, n, sampleEvery, pinXminAt, pinXminFor, pinWindow);
        }

        public Options withSampleEvery(Duration d) {
            return new Options(databaseUrl, rate, duration, retention, payloadBytes, d, pinXminAt, pinXminFor, pinWindow);
        }

        /** Holds the vacuum horizon from {@code at} (after the start of producing) for {@code length}. */
        public Options withPin(Duration at, Duration length) {
            return new Options(databaseUrl, rate, duration, retention, payloadBytes, sampleEvery, at, length, pinWindow);
        }

        public Options withPinWindow(Duration d) {
            return new Options(databaseUrl, rate, duration, retention, payloadBytes, sampleEvery, pinXminAt, pinXminFor, d);
        }
    }

    /**
     * One sample interval.
     *
     * @param minute            1-based index of the interval (a minute with the default interval)
     * @param seconds           its end, in seconds from the start of producing
     * @param producedPerS      produces committed in the interval, per second
     * @param deliveredPerS     first deliveries in the interval, per second
     * @param p50Ms             median produce → handler latency of the interval's deliveries (NaN: none)
     * @param p99Ms             its 99th percentile
     * @param backlog           committed but not yet delivered at the end of the interval
     * @param streamBytes       bytes of the stream's tables
     * @param controlPlaneBytes bytes of every other table of the schema
     * @param partitions        log partitions existing
     * @param oldestId          the log's smallest id (null: empty)
     * @param deadTuples        dead tuples per family table, and of the control plane
     * @param pinned            whether the pin was held during (part of) the interval
     */
    public record Row(int minute, double seconds, double producedPerS, double deliveredPerS, double p50Ms, double p99Ms,
                      long backlog, long streamBytes, long controlPlaneBytes, int partitions, Long oldestId,
                      Map<String, Long> deadTuples, boolean pinned) {
        public Row {
            deadTuples = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(deadTuples));
        }

        /** Bytes of the stream and the control plane together. */
        public long totalBytes() {
            return streamBytes + controlPlaneBytes;
        }

        Map<String, Object> toJson() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("minute", minute);
            m.put("t_s", BenchJson.round(seconds, 1));
            m.put("produced_per_s", BenchJson.round(producedPerS, 1));
            m.put("delivered_per_s", BenchJson.round(deliveredPerS, 1));
            m.put("p50_ms", LatencyBenchmark.figure(p50Ms, 2));
            m.put("p99_ms", LatencyBenchmark.figure(p99Ms, 2));
            m.put("backlog", backlog);
            m.put("bytes_stream", streamBytes);
            m.put("bytes_control_plane", controlPlaneBytes);
            m.put("bytes_total", totalBytes());
            m.put("partitions", partitions);
            m.put("oldest_id", oldestId);
            m.put("dead_tuples", deadTuples);
            m.put("pinned", pinned);
            return m;
        }
    }

    /**
     * What the pin did to the consumer.
     *
     * @param xmin          the xmin of the pin's snapshot
     * @param heldSeconds   from its snapshot to its rollback
     * @param held          whether another session still saw it idle in its transaction just before the rollback
     * @param p99BeforeMs   p99 of the messages produced in the window before the pin
     * @param p99DuringMs   p99 of those produced while it was held
     * @param p99AfterMs    p99 of those produced in the window that starts one window after the pin ended (NaN when
     *                      producing ended before)
     * @param rateBefore    first deliveries per second in the window before the pin
     * @param rateDuring    first deliveries per second while it was held
     */
    public record Pin(String xmin, double heldSeconds, boolean held, double p99BeforeMs, double p99DuringMs,
                      double p99AfterMs, double rateBefore, double rateDuring) {
        /** Delivered/s during the pin ÷ before it. */
        public double rateRatio() {
            return rateBefore == 0 ? Double.NaN : rateDuring / rateBefore;
        }
    }

    /**
     * The outcome.
     *
     * @param options          what was run
     * @param environment      where it ran
     * @param streamId         the soak stream's id
     * @param rows             one per sample interval, the last at the end of producing
     * @param producingSeconds how long producing went on, as measured
     * @param produced         produces committed (each a new message)
     * @param delivered        distinct messages handed to a handler by the end
     * @param deliveredInWindow distinct messages first handed to a handler while producing went on
     * @param lost             committed, never delivered
     * @param redelivered      handler calls beyond the first per message
     * @param produceFailures  produces that failed (the first one's message in {@code firstFailure})
     * @param duplicates       produces answered as duplicates (each key is unique: must be 0)
     * @param p50Ms            median latency of the whole run
     * @param p99Ms            its 99th percentile
     * @param pin              the pin's figures (null without one)
     * @param firstFailure     the first produce failure (null: none)
     */
    public record Result(Options options, ProduceBenchmark.Environment environment, long streamId, List<Row> rows,
                         double producingSeconds, long produced, long delivered, long deliveredInWindow, long lost,
                         long redelivered, long produceFailures, long duplicates, double p50Ms, double p99Ms, Pin pin,
                         String firstFailure) implements ScenarioResult {
        public Result {
            rows = List.copyOf(rows);
        }

        /** Distinct deliveries per second while producing went on. */
        public double deliveredPerS() {
            return deliveredInWindow / producingSeconds;
        }

        /**
         * The median of the rows' total bytes from one retention plus one sample interval after the start on
         * (the storage once retention is at work); null when no row is that late.
         */
        public Long bytesSteady() {
            double from = (options.retention().toMillis() + options.sampleEvery().toMillis()) / 1000.0;
            List<Double> totals = new ArrayList<>();
            for (Row r : rows) {
                if (r.seconds() >= from - 0.5) {
                    totals.add((double) r.totalBytes());
                }
            }
            return totals.isEmpty() ? null : Math.round(BenchJson.median(totals));
        }

        /** The total bytes of the last row (the end of producing); null without rows. */
        public Long bytesEnd() {
            return rows.isEmpty() ? null : rows.get(rows.size() - 1).totalBytes();
        }

        /** bytes_end ÷ bytes_steady; null when either is missing. */
        public Double growth() {
            Long steady = bytesSteady();
            Long end = bytesEnd();
            return steady == null || end == null || steady == 0 ? null : BenchJson.round(end / (double) steady, 3);
        }

        @Override
        public List<Map<String, Object>> runLines() {
            return rows.stream().map(SoakBenchmark::runLine).toList();
        }

        @Override
        public Map<String, Object> summary() {
            Double growth = growth();
            Map<String, Object> m = BenchJson.summaryLine(SCENARIO, growth, null, null, null, UNIT, environment);
            m.put("duration_s", options.duration().toNanos() / 1e9);
            m.put("rate_per_s", options.rate());
            m.put("retention_s", options.retention().toNanos() / 1e9);
            m.put("partition_size", options.partitionSize());
            m.put("payload_bytes", options.payloadBytes());
            m.put("maintenance_interval_s", MAINTENANCE_INTERVAL.toNanos() / 1e9);
            m.put("sample_every_s", options.sampleEvery().toNanos() / 1e9);
            m.put("embedded", environment.embedded());
            m.put("produced", produced);
            m.put("delivered", delivered);
            m.put("lost", lost);
            m.put("redelivered", redelivered);
            m.put("produce_failures", produceFailures);
            m.put("delivered_per_s", BenchJson.round(deliveredPerS(), 1));
            m.put("p50_ms", LatencyBenchmark.figure(p50Ms, 2));
            m.put("p99_ms", LatencyBenchmark.figure(p99Ms, 2));
            m.put("bytes_steady", bytesSteady());
            m.put("bytes_end", bytesEnd());
            m.put("growth", growth);
            m.put("pin_xmin_at_s", options.pinned() ? options.pinXminAt().toNanos() / 1e9 : null);
            m.put("pin_xmin_for_s", options.pinned() ? options.pinXminFor().toNanos() / 1e9 : null);
            m.put("pin_window_s", options.pinned() ? options.pinWindow().toNanos() / 1e9 : null);
            m.put("pin_held", pin == null ? null : pin.held());
            m.put("p99_ms_before_pin", pin == null ? null : LatencyBenchmark.figure(pin.p99BeforeMs(), 2));
            m.put("p99_ms_during_pin", pin == null ? null : LatencyBenchmark.figure(pin.p99DuringMs(), 2));
            m.put("p99_ms_after_pin", pin == null ? null : LatencyBenchmark.figure(pin.p99AfterMs(), 2));
            m.put("rate_ratio_during_pin", pin == null ? null : LatencyBenchmark.figure(pin.rateRatio(), 3));
            m.put("minutes", rows.stream().map(Row::toJson).toList());
            return m;
        }

        @Override
        public List<String> problems() {
            List<String> p = new ArrayList<>();
            if (lost != 0) {
                p.add(lost + " committed messages never reached a handler (dropped by retention, or not drained within "
                        + DRAIN_LIMIT.toSeconds() + " s)");
            }
            if (produceFailures != 0) {
                p.add(produceFailures + " produces failed; the first: " + firstFailure);
            }
            if (duplicates != 0) {
                p.add(duplicates + " produces with a fresh idempotency key were answered as duplicates");
            }
            if (pin != null && !pin.held()) {
                p.add("the pin's transaction had ended before its time was up (idle_in_transaction_session_timeout?); "
                        + "the pin figures are void");
            }
            return p;
        }
    }

    /** The run line of a row: the row under {@code scenario}, {@code kind} = run, {@code run} = 1. */
    static Map<String, Object> runLine(Row row) {
        Map<String, Object> m = BenchJson.runLine(SCENARIO, 1);
        m.putAll(row.toJson());
        return m;
    }

    /** Runs the benchmark without progress callbacks. */
    public Result run(Options options) {
        return run(options, ScenarioListener.NONE);
    }

    /** Runs the benchmark, reporting each row to {@code listener} as it is recorded. */
    public Result run(Options options, ScenarioListener listener) {
        Objects.requireNonNull(options, "options");
        // The producer's transactions, the group's claim loop, completions and lease renewal, the LISTEN session,
        // the manager's pass and the fleet's heartbeat, and spares.
        ScenarioRunner.Setup setup = ScenarioRunner.Setup.of(options.databaseUrl(), "the soak benchmark", 10)
                .withClient(b -> b.maintenanceInterval(MAINTENANCE_INTERVAL));
        return ScenarioRunner.run(setup, listener, c -> SoakRun.measure(c, options));
    }
}
