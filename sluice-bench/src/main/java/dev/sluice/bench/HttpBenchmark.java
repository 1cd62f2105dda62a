package dev.sluice.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.ConsumeOptions;
import dev.sluice.Consumption;
import dev.sluice.Outcome;
import dev.sluice.Outgoing;
import dev.sluice.ProduceOptions;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.server.SluiceServer;
import java.io.IOException;
import org.apache.hc.client5.http.classic.methods.HttpPost;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.io.entity.ByteArrayEntity;
import org.apache.hc.core5.http.io.entity.EntityUtils;
import org.apache.hc.core5.util.Timeout;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The {@code http} benchmark (docs/benchmarks.md): the HTTP API beside the library, in the same run, on the same
 * database. Per run: (1) produce N messages in batches of B from C client threads — over HTTP
 * ({@code POST .../messages:batch}, keep-alive connections) into one stream and through
 * {@link Producer#produceBatch} into another; (2) drain each backlog — over HTTP by C clients pulling claims of up to
 * B messages, each claim carrying the outcomes of the previous one ({@code resolve}), through the library by a consumption (concurrency C) whose handler
 * succeeds; (3) the latency of one message produced alone, L times each way. {@code produce_ratio} and
 * {@code consume_ratio} are HTTP rate / library rate; {@code added_p50_ms} / {@code added_p99_ms} are the HTTP
 * single-produce latency quantiles minus the library's; {@code lost} counts messages produced over HTTP that no claim
 * delivered (must be 0). Targets: both ratios ≥ 0.5. A warm-up round of a tenth of the size runs first (run 0, not reported).
 */
public final class HttpBenchmark {
    public static final String SCENARIO = "http";
    public static final double TARGET_RATIO = 0.5;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration TIMEOUT = Duration.ofMinutes(5);

    /**
     * What to run.
     *
     * @param databaseUrl  the server to measure; null starts a temporary embedded one
     * @param messages     messages per run and side (default 50,000)
     * @param clients      HTTP clients and library threads (default 8)
     * @param batch        messages per batch and per claim (default 100)
     * @param payloadBytes payload size (default 256)
     * @param latencies    single-message produces timed per side (default 500)
     * @param runs         runs; medians reported (default 1)
     */
    public record Options(String databaseUrl, int messages, int clients, int batch, int payloadBytes, int latencies, int runs) {
        public Options {
            check("messages", messages, 100, 10_000_000);
            check("clients", clients, 1, 64);
            check("batch", batch, 1, 1000);
            check("payload bytes", payloadBytes, 1, 64 * 1024);
            check("latencies", latencies, 10, 100_000);
            check("runs", runs, 1, 100);
            if (databaseUrl != null && databaseUrl.isBlank()) {
                databaseUrl = null;
            }
        }

        private static void check(String what, int v, int min, int max) {
            if (v < min || v > max) {
                throw new IllegalArgumentException(what + " must be between " + min + " and " + max + " (got " + v + ")");
            }
        }

        public static Options defaults() {
            return new Options(null, 50_000, 8, 100, 256, 500, 1);
        }
    }

    /** One run's figures. */
    public record RunResult(int run, double httpProduce, double libProduce, double httpConsume, double libConsume,
                            double httpP50, double httpP99, double libP50, double libP99, long lost) {
        double produceRatio() {
            return httpProduce / libProduce;
        }

        double consumeRatio() {
            return httpConsume / libConsume;
        }

        Map<String, Object> toJson() {
            Map<String, Object> m = BenchJson.runLine(SCENARIO, run);
            m.put("http_produce_per_s", BenchJson.round(httpProduce, 1));
            m.put("library_produce_per_s", BenchJson.round(libProduce, 1));
            m.put("produce_ratio", BenchJson.round(produceRatio(), 3));
            m.put("http_consume_per_s", BenchJson.round(httpConsume, 1));
            m.put("library_consume_per_s", BenchJson.round(libConsume, 1));
            m.put("consume_ratio", BenchJson.round(consumeRatio(), 3));
            m.put("added_p50_ms", BenchJson.round(httpP50 - libP50, 3));
            m.put("added_p99_ms", BenchJson.round(httpP99 - libP99, 3));
            m.put("lost", lost);
            return m;
        }
    }

    /** Every run and the medians. */
    public record Result(Options options, ProduceBenchmark.Environment environment, List<RunResult> runs) implements ScenarioResult {
        @Override
        public List<Map<String, Object>> runLines() {
            return runs.stream().map(RunResult::toJson).toList();
        }

        @Override
        public Map<String, Object> summary() {
            double produce = Bench.median(runs, RunResult::produceRatio);
            double consume = Bench.median(runs, RunResult::consumeRatio);
            Map<String, Object> m = BenchJson.summaryLine(SCENARIO, BenchJson.round(Bench.median(runs, RunResult::httpConsume), 1),
                    BenchJson.round(Bench.median(runs, RunResult::libConsume), 1), "library consume", BenchJson.round(consume, 3),
                    "msgs/s", environment);
            m.put("produce_ratio", BenchJson.round(produce, 3));
            m.put("consume_ratio", BenchJson.round(consume, 3));
            m.put("target_ratio", TARGET_RATIO);
            m.put("target", produce >= TARGET_RATIO && consume >= TARGET_RATIO ? "pass" : "fail");
            m.put("http_produce_per_s", BenchJson.round(Bench.median(runs, RunResult::httpProduce), 1));
            m.put("library_produce_per_s", BenchJson.round(Bench.median(runs, RunResult::libProduce), 1));
            m.put("http_consume_per_s", BenchJson.round(Bench.median(runs, RunResult::httpConsume), 1));
            m.put("library_consume_per_s", BenchJson.round(Bench.median(runs, RunResult::libConsume), 1));
            m.put("added_p50_ms", BenchJson.round(Bench.median(runs, r -> r.httpP50() - r.libP50()), 3));
            m.put("added_p99_ms", BenchJson.round(Bench.median(runs, r -> r.httpP99() - r.libP99()), 3));
            m.put("lost", runs.stream().mapToLong(RunResult::lost).sum());
            m.put("messages", options.messages());
            m.put("clients", options.clients());
            m.put("batch", options.batch());
            m.put("payload_bytes", options.payloadBytes());
            m.put("runs", runs.size());
            m.put("embedded", environment.embedded());
            return m;
        }

        @Override
        public List<String> problems() {
            long lost = runs.stream().mapToLong(RunResult::lost).sum();
            return lost == 0 ? List.of() : List.of(lost + " messages produced over HTTP were never delivered to a claim");
        }
    }

    /** Runs the benchmark. */
    public Result run(Options o, ScenarioListener listener) {
        ScenarioRunner.Setup setup = ScenarioRunner.Setup.of(o.databaseUrl(), "the http benchmark", 2 * o.clients() + 16);
        return ScenarioRunner.run(setup, listener, ctx -> {
            CloseableHttpClient client = client(o.clients());
            try (SluiceServer server = SluiceServer.builder(ctx.sluice()).port(0).start()) {
                String base = server.url() + "api/v1/streams/";
                // A warm-up round (not reported, a tenth of the size, its own streams), so that neither side's first
                // measured phase pays for the JIT: the HTTP side runs first in each round and would pay most.
                Options warm = new Options(o.databaseUrl(), Math.max(1000, o.messages() / 10), o.clients(), o.batch(),
                        o.payloadBytes(), Math.min(50, o.latencies()), 1);
                one(warm, ctx.sluice(), client, base, 0, listener);
                List<RunResult> runs = ctx.runs(o.runs(), run -> one(o, ctx.sluice(), client, base, run, listener),
                        r -> listener.finished(r.toJson()));
                return new Result(o, ctx.environment(), runs);
            } finally {
                client.close(org.apache.hc.core5.io.CloseMode.IMMEDIATE);
            }
        });
    }

    private RunResult one(Options o, Sluice sluice, CloseableHttpClient client, String base, int run, ScenarioListener listener) {
        String httpStream = "bench.http." + run;
        String libStream = "bench.lib." + run;
        for (String s : List.of(httpStream, libStream)) {
            sluice.stream(s).register();
            sluice.stream(s).consumerGroup("g").register();
        }
        String text = "x".repeat(o.payloadBytes());
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        int batches = (o.messages() + o.batch() - 1) / o.batch();

        byte[] batchBody = batchBody(text, o.batch());
        List<Outgoing<byte[]>> batch = new ArrayList<>();
        for (int i = 0; i < o.batch(); i++) {
            batch.add(Outgoing.of(bytes, ProduceOptions.NONE));
        }
        java.util.function.DoubleSupplier httpSide = () -> {
            listener.phase(run, "produce over HTTP");
            AtomicLong nextBatch = new AtomicLong();
            long t0 = System.nanoTime();
            Bench.runThreads(o.clients(), "sluice-bench-http-produce-", i -> {
                while (nextBatch.getAndIncrement() < batches) {
                    expect(post(client, base + httpStream + "/messages:batch", batchBody, "application/json"), 201, "batch produce");
                }
            });
            return (double) batches * o.batch() / seconds(t0);
        };
        java.util.function.DoubleSupplier librarySide = () -> {
            listener.phase(run, "produce through the library");
            AtomicLong nextLib = new AtomicLong();
            long t1 = System.nanoTime();
            try (Producer<byte[]> producer = sluice.stream(libStream).producer()) {
                Bench.runThreads(o.clients(), "sluice-bench-lib-produce-", i -> {
                    while (nextLib.getAndIncrement() < batches) {
                        producer.produceBatch(batch);
                    }
                });
            }
            return (double) batches * o.batch() / seconds(t1);
        };
        // Which side goes first alternates from run to run (odd runs: HTTP first), so that what the first phase
        // leaves behind (WAL, checkpoints, dirty pages) does not always fall on the same side.
        double httpProduce;
        double libProduce;
        if (run % 2 == 1) {
            httpProduce = httpSide.getAsDouble();
            libProduce = librarySide.getAsDouble();
        } else {
            libProduce = librarySide.getAsDouble();
            httpProduce = httpSide.getAsDouble();
        }
        long total = (long) batches * o.batch();

        listener.phase(run, "consume over HTTP");
        Set<Long> delivered = ConcurrentHashMap.newKeySet();
        // Both consume sides are timed until the last message reached a handler (a client): a client still in its
        // long-poll when another took the last message is not charged to the rate.
        AtomicLong httpDone = new AtomicLong();
        String claims = base + httpStream + "/groups/g/claims";
        long t2 = System.nanoTime();
        long deadline = t2 + TIMEOUT.toNanos();
        Bench.runThreads(o.clients(), "sluice-bench-http-consume-", i -> {
            // Each claim carries the outcomes of the client's previous one ("resolve"): one round trip per batch.
            String resolve = null;
            while (delivered.size() < total && System.nanoTime() < deadline) {
                String body = "{\"max\":" + o.batch() + ",\"wait\":\"1s\",\"lease\":\"60s\"" + (resolve == null ? "" : ",\"resolve\":" + resolve) + "}";
                JsonNode c = JSON.readTree(expect(post(client, claims, body.getBytes(StandardCharsets.UTF_8), "application/json"), 200, "claim"));
                resolve = null;
                if (!c.path("claim").isTextual()) {
                    continue;
                }
                StringBuilder b = new StringBuilder("{\"claim\":\"").append(c.path("claim").asText()).append("\",\"outcomes\":[");
                boolean first = true;
                for (JsonNode m : c.path("messages")) {
                    long id = m.path("id").asLong();
                    if (delivered.add(id) && delivered.size() >= total) {
                        httpDone.compareAndSet(0, System.nanoTime());
                    }
                    b.append(first ? "" : ",").append("{\"id\":").append(id).append(",\"outcome\":\"success\"}");
                    first = false;
                }
                resolve = b.append("]}").toString();
            }
            if (resolve != null) {
                String claim = JSON.readTree(resolve).path("claim").asText();
                expect(post(client, claims + "/" + claim + "/outcomes", resolve.getBytes(StandardCharsets.UTF_8), "application/json"),
                        200, "outcomes");
            }
        });
        double httpConsume = delivered.size() / seconds(t2, httpDone.get());
        long lost = total - delivered.size();

        listener.phase(run, "consume through the library");
        AtomicLong consumed = new AtomicLong();
        AtomicLong libDone = new AtomicLong();
        long t3 = System.nanoTime();
        try (Consumption c = sluice.stream(libStream).consumerGroup("g").consume(m -> {
            if (consumed.incrementAndGet() == total) {
                libDone.compareAndSet(0, System.nanoTime());
            }
            return Outcome.success();
        }, ConsumeOptions.defaults().withBatchSize(o.batch()).withConcurrency(o.clients()))) {
            while (consumed.get() < total && System.nanoTime() < deadline) {
                java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
            }
        }
        double libConsume = consumed.get() / seconds(t3, libDone.get());

        listener.phase(run, "single-message latency");
        double[] http = new double[o.latencies()];
        double[] lib = new double[o.latencies()];
        try (Producer<byte[]> producer = sluice.stream(libStream).producer()) {
            for (int i = 0; i < o.latencies(); i++) {
                long a = System.nanoTime();
                expect(post(client, base + httpStream + "/messages", bytes, "application/octet-stream"), 201, "produce");
                http[i] = (System.nanoTime() - a) / 1e6;
                long b = System.nanoTime();
                producer.produce(bytes, ProduceOptions.NONE);
                lib[i] = (System.nanoTime() - b) / 1e6;
            }
        }
        Arrays.sort(http);
        Arrays.sort(lib);
        return new RunResult(run, httpProduce, libProduce, httpConsume, libConsume, Bench.quantile(http, 0.5),
                Bench.quantile(http, 0.99), Bench.quantile(lib, 0.5), Bench.quantile(lib, 0.99), lost);
    }

    private static byte[] batchBody(String text, int n) {
        List<Map<String, Object>> items = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("payload_text", text);
            items.add(m);
        }
        try {
            return JSON.writeValueAsBytes(items);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A status and a body. */
    private record Reply(int status, byte[] body) {
    }

    /**
     * Keep-alive clients that run each request on the calling thread (a pooled connection per client thread), ask
     * for no compression and never retry on their own (a retried batch would be produced twice).
     */
    private static CloseableHttpClient client(int clients) {
        ConnectionConfig connections = ConnectionConfig.custom().setConnectTimeout(Timeout.ofSeconds(10))
                .setSocketTimeout(Timeout.ofSeconds(60)).build();
        return HttpClients.custom()
                .setConnectionManager(PoolingHttpClientConnectionManagerBuilder.create().setMaxConnTotal(clients)
                        .setMaxConnPerRoute(clients).setDefaultConnectionConfig(connections).build())
                .disableAutomaticRetries().disableContentCompression().disableRedirectHandling().disableCookieManagement()
                .build();
    }

    private static Reply post(CloseableHttpClient client, String url, byte[] body, String contentType) {
        HttpPost post = new HttpPost(url);
        post.setEntity(new ByteArrayEntity(body, ContentType.parse(contentType)));
        try {
            return client.execute(post, r -> new Reply(r.getCode(), r.getEntity() == null ? new byte[0]
                    : EntityUtils.toByteArray(r.getEntity())));
        } catch (IOException e) {
            throw new BenchmarkException("HTTP request failed: " + e, e);
        }
    }

    private static byte[] expect(Reply r, int status, String what) {
        if (r.status() != status) {
            throw new BenchmarkException(what + " answered " + r.status() + ": "
                    + new String(r.body(), StandardCharsets.UTF_8).substring(0, Math.min(300, r.body().length)));
        }
        return r.body();
    }

    private static double seconds(long since) {
        return (System.nanoTime() - since) / 1e9;
    }

    /** Seconds from {@code since} to {@code until}, or to now when {@code until} is 0 (never reached). */
    private static double seconds(long since, long until) {
        return ((until == 0 ? System.nanoTime() : until) - since) / 1e9;
    }
}
