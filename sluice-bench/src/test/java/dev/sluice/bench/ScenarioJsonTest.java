package dev.sluice.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The exact JSON lines of every scenario (field names, order, rounding) for fixed figures, without a
 * server: scripts read them line by line (docs/benchmarks.md, "JSON output"), so a refactoring must not
 * change a byte of them.
 */
class ScenarioJsonTest {
    private static final ProduceBenchmark.Environment ENV = new ProduceBenchmark.Environment("17.2", 4, true, "bench_x");

    private static List<String> lines(List<Map<String, Object>> runs, Map<String, Object> summary) {
        List<String> out = new ArrayList<>();
        runs.forEach(r -> out.add(BenchJson.line(r)));
        out.add(BenchJson.line(summary));
        return out;
    }

    static List<String> produce() {
        ProduceBenchmark.Options o = ProduceBenchmark.Options.defaults().withRuns(2).withCallers(3);
        List<ProduceBenchmark.RunResult> runs = List.of(
                new ProduceBenchmark.RunResult(1, 1234.567, 2345.678, 0.52631, 3.14159, 3.14, 2, 111, 222, 20.0, 150, 0,
                        150, 300, 300),
                new ProduceBenchmark.RunResult(2, 1500.04, 2000.06, 0.75, 2.5, 2.5, 2, 120, 230, 20.0, 160, 0, 159, 310,
                        310));
        ProduceBenchmark.Result r = ProduceBenchmark.Result.of(o, ENV, runs);
        return lines(runs.stream().map(x -> x.toJson(o)).toList(), r.summary());
    }

    static List<String> e2e() {
        E2eBenchmark.Options o = E2eBenchmark.Options.fanout().withRuns(2);
        E2eBenchmark.Result r = new E2eBenchmark.Result(o, ENV, List.of(
                new E2eBenchmark.RunResult(1, 1000.04, 2000.06, 0.50001, 1001.1, 4004.4, -0.26, 2002.2, 8008.8, 1.26,
                        3.333, 3.3349, 45.67, 20000, 0, 1, true, 2, null),
                new E2eBenchmark.RunResult(2, 1100, 2100, 0.5238, 1101.1, 4404.4, 0.5, 2102.2, 8408.8, 0.25, 3.5, 3.5,
                        50, 22000, 3, 0, false, 0, "group g1: 3 missing")));
        return lines(r.runLines(), r.summary());
    }

    static List<String> queue() {
        QueueBenchmark.Options o = QueueBenchmark.Options.defaults().withRuns(2).withJobs(5000);
        QueueBenchmark.Result r = new QueueBenchmark.Result(o, ENV, List.of(
                new QueueBenchmark.RunResult(1, 50000.04, 60000.06, 40000.123, 45000.456, 3.14159, 7.777, 0, 0, 0, 1.234,
                        2.345),
                new QueueBenchmark.RunResult(2, 52000, 61000, 41000, 44000, 3.5, 8.25, 1, 2, 0, 1.5, 2.5)));
        return lines(r.runLines(), r.summary());
    }

    static List<String> latency() {
        LatencyBenchmark.Latencies w = new LatencyBenchmark.Latencies(4000, 199.95, 2.3456, 4.5678, 9.8765, 20.123, 1, 0);
        LatencyBenchmark.Latencies p = new LatencyBenchmark.Latencies(4000, 200.04, 500.123, 950.5, 990.25, 1001.5, 0, 0);
        LatencyBenchmark.Latencies pinned = new LatencyBenchmark.Latencies(100, 199.5, 2.5, 5.5, Double.NaN, 30, 0, 0);
        LatencyBenchmark.Options plain = LatencyBenchmark.Options.defaults().withRuns(2);
        LatencyBenchmark.Result a = new LatencyBenchmark.Result(plain, ENV, List.of(new LatencyBenchmark.RunResult(1, w, p),
                new LatencyBenchmark.RunResult(2, p, w)));
        LatencyBenchmark.Options pin = LatencyBenchmark.Options.defaults().withPinXminFor(Duration.ofSeconds(30));
        LatencyBenchmark.Result b = new LatencyBenchmark.Result(pin, ENV, List.of(new LatencyBenchmark.RunResult(1, w, p,
                pinned, new LatencyBenchmark.Pin(12345, 30.0012, true))));
        List<String> out = new ArrayList<>(lines(a.runLines(), a.summary()));
        out.addAll(lines(b.runLines(), b.summary()));
        return out;
    }

    static List<String> idle() {
        IdleBenchmark.Options o = IdleBenchmark.Options.defaults().withGroups(3);
        Map<String, Object> top = new LinkedHashMap<>();
        top.put("calls", 40L);
        top.put("query", "SELECT 1");
        IdleBenchmark.Result r = new IdleBenchmark.Result(o, ENV, 60.0123, "pg_stat_statements", 40, 45, 7, 7, 0L, 6L,
                List.of(top), 0, 20, 32, 1_000_000, 1_030_001);
        return lines(r.runLines(), r.summary());
    }

    static List<String> backlog() {
        BacklogBenchmark.Options o = BacklogBenchmark.Options.defaults().withSize(1000).withRepeats(2);
        BacklogBenchmark.Result r = new BacklogBenchmark.Result(o, ENV, 12.345, List.of(10.123, 12.345),
                List.of(9.876, 8.765), List.of(11.111, 10.999), 0);
        return lines(r.runLines(), r.summary());
    }

    static List<String> soak() {
        Map<String, Long> dead = new LinkedHashMap<>();
        dead.put("message_log_1", 12L);
        dead.put("consumer_group_cursor_1", 345L);
        dead.put("control_plane", 6L);
        List<SoakBenchmark.Row> rows = List.of(
                new SoakBenchmark.Row(1, 60.0123, 1999.96, 1998.123, 2.3456, 9.8765, 3, 150_000_000, 1_000_000, 4, 1L, dead,
                        false),
                new SoakBenchmark.Row(2, 120.004, 2000.04, 2000.01, 2.5, 10.25, 0, 160_000_000, 1_100_000, 5, 30_001L, dead,
                        true),
                new SoakBenchmark.Row(3, 180.0, 2000, 2001.5, Double.NaN, Double.NaN, 0, 170_000_000, 1_200_000, 5, null,
                        dead, false));
        SoakBenchmark.Options plain = SoakBenchmark.Options.defaults().withDuration(Duration.ofMinutes(3));
        SoakBenchmark.Result a = new SoakBenchmark.Result(plain, ENV, 1, rows, 180.0123, 360_000, 360_000, 359_990, 0, 2,
                0, 0, 2.3456, 9.8765, null, null);
        SoakBenchmark.Options pinned = plain.withPin(Duration.ofMinutes(1), Duration.ofSeconds(30));
        SoakBenchmark.Result b = new SoakBenchmark.Result(pinned, ENV, 1, rows, 180.0, 360_000, 359_999, 359_000, 1, 0, 1,
                0, 2.5, 12.3456, new SoakBenchmark.Pin("1234", 30.0012, true, 9.8765, 40.125, 10.5, 2000.0, 1900.04),
                "boom");
        List<String> out = new ArrayList<>(lines(a.runLines(), a.summary()));
        out.addAll(lines(b.runLines(), b.summary()));
        return out;
    }

    static List<String> queueWithKeepRuns() {
        QueueBenchmark.Options o = QueueBenchmark.Options.defaults().withJobs(5000).withKeepRuns(Duration.ofDays(1));
        QueueBenchmark.Result r = new QueueBenchmark.Result(o, ENV, List.of(
                new QueueBenchmark.RunResult(1, 50000.04, 60000.06, 40000.123, 45000.456, 3.14159, 7.777, 0, 0, 0, 1.234,
                        2.345, new QueueBenchmark.KeepRuns(45000.05, 28000.06, 1.456, 5000, 15000, 0, 0))));
        return lines(r.runLines(), r.summary());
    }

    static List<String> await() {
        AwaitBenchmark.Options o = AwaitBenchmark.Options.defaults().withRuns(2);
        AwaitBenchmark.Result r = new AwaitBenchmark.Result(o, ENV, List.of(
                new AwaitBenchmark.RunResult(1, 1000, 3.14159, 20.005, 50.5, 12, 9.876, 40.04, 6.5, 1.2345, 2.5, 0, null),
                new AwaitBenchmark.RunResult(2, 1000, 4.0, 30.0, 60.0, 3, 11.0, 50.0, 7.5, 1.5, 2.0, 0, null)));
        return lines(r.runLines(), r.summary());
    }

    /** The lines only {@code queue --keep-runs} and {@code await} print, pinned the same way in a file of their own. */
    @Test
    void keepRunsAndAwaitPrintTheSameLinesAsBefore() throws Exception {
        List<String> actual = new ArrayList<>(queueWithKeepRuns());
        actual.addAll(await());
        List<String> expected;
        try (var in = ScenarioJsonTest.class.getResourceAsStream("scenario-lines-runs.jsonl")) {
            expected = new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList();
        }
        assertThat(actual).containsExactlyElementsOf(expected);
    }

    @Test
    void everyScenarioPrintsTheSameLinesAsBefore() throws Exception {
        List<String> actual = new ArrayList<>();
        for (List<String> l : List.of(produce(), e2e(), queue(), latency(), idle(), backlog(), soak())) {
            actual.addAll(l);
        }
        List<String> expected;
        try (var in = ScenarioJsonTest.class.getResourceAsStream("scenario-lines.jsonl")) {
            expected = new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList();
        }
        assertThat(actual).containsExactlyElementsOf(expected);
    }
}
