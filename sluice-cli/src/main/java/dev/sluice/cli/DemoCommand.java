package dev.sluice.cli;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.ConsumeOptions;
import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.ConsumptionStats;
import dev.sluice.ErrorCode;
import dev.sluice.GroupConfig;
import dev.sluice.GroupInfo;
import dev.sluice.Outcome;
import dev.sluice.ProduceOptions;
import dev.sluice.Producer;
import dev.sluice.RetryPolicy;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import dev.sluice.internal.jdbc.DatabaseUrls;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code sluice demo}: a stream, 10,000 keyed messages produced while two groups consume them — one
 * always succeeds, one fails a few percent so retries and dead letters appear — with live progress
 * and a summary. Runs on the embedded default (or {@code --database-url}); exits 0 when every message
 * reached an end state in both groups.
 */
@Command(name = "demo", description = {"Produce keyed messages while two consumer groups consume them (one fails a few percent,",
        "so retries and dead letters appear); show progress and a summary. Re-running replaces the demo stream."})
final class DemoCommand extends Base {
    static final String STREAM = "demo.orders";

    @Option(names = "--messages", paramLabel = "N", defaultValue = "10000", description = "Messages to produce (default: ${DEFAULT-VALUE}).")
    int messages;

    @Option(names = "--timeout", paramLabel = "DURATION", defaultValue = "5m", description = "Give up after (default: ${DEFAULT-VALUE}).")
    String timeout;

    @Override
    public Integer call() throws Exception {
        if (messages < 1 || messages > 10_000_000) {
            throw new SluiceException(ErrorCode.INVALID_CONFIG, "--messages must be between 1 and 10000000");
        }
        Duration limit = Durations.parse(timeout);
        PrintWriter out = out();
        try (CliContext ctx = CliContext.open(globals(), true)) {
            // One round trip first: an unreachable database is a coded error, not the pool's own exception.
            ctx.sluice().streams();
            HikariConfig hc = new HikariConfig();
            // The same data source (and timeouts) as every other command, pooled.
            hc.setDataSource(DatabaseUrls.dataSource(ctx.jdbcUrl()));
            hc.setMaximumPoolSize(12);
            hc.setTransactionIsolation("TRANSACTION_READ_COMMITTED"); // named, not detected: see ServeCommand
            hc.setPoolName("sluice-demo");
            try (HikariDataSource pool = new HikariDataSource(hc);
                 Sluice sluice = Sluice.builder().dataSource(pool).schema(globals().schema).allowDestroy(true).build()) {
                return run(sluice, out, limit);
            }
        }
    }

    private int run(Sluice sluice, PrintWriter out, Duration limit) throws Exception {
        if (sluice.stream(STREAM).get().isPresent()) {
            sluice.stream(STREAM).destroy(true); // a fresh demo each time
        }
        long streamId = sluice.stream(STREAM).register().id();
        RetryPolicy quick = RetryPolicy.DEFAULT.withMaxAttempts(4).withBackoff(Duration.ofMillis(200), 2.0, Duration.ofSeconds(2));
        ConsumerGroup<String> billing = sluice.stream(STREAM, String.class).consumerGroup("billing");
        ConsumerGroup<String> shipping = sluice.stream(STREAM, String.class).consumerGroup("shipping");
        billing.register(GroupConfig.builder().retry(quick).build());
        shipping.register(GroupConfig.builder().retry(quick).build());
        out.println("sluice demo: stream '" + STREAM + "' (id " + streamId + "), " + messages
                + " keyed messages, groups 'billing' (always succeeds) and 'shipping' (fails ~4%, a few for good)");
        ConsumeOptions options = ConsumeOptions.defaults().withBatchSize(128).withConcurrency(8);
        long start = System.nanoTime();
        AtomicLong produced = new AtomicLong();
        AtomicLong producedAt = new AtomicLong();
        try (Consumption b = billing.consume(m -> Outcome.success(), options);
             Consumption s = shipping.consume(m -> shippingOutcome(m.id(), m.attempt()), options);
             Producer<String> producer = sluice.stream(STREAM, String.class).producer()) {
            Thread feeder = new Thread(() -> produce(producer, produced, producedAt, start), "sluice-demo-producer");
            feeder.setDaemon(true);
            feeder.start();
            long deadline = start + limit.toNanos();
            long lastPrint = 0;
            while (true) {
                ConsumptionStats bs = b.stats();
                ConsumptionStats ss = s.stats();
                boolean done = produced.get() == messages && bs.succeeded() >= messages && ss.succeeded() + ss.dead() >= messages;
                if (System.nanoTime() - lastPrint > TimeUnit.MILLISECONDS.toNanos(1000) || done) {
                    lastPrint = System.nanoTime();
                    out.printf("  %5.1fs  produced %,d/%,d   billing %,d   shipping %,d ok, %,d retries, %,d dead%n",
                            seconds(start), produced.get(), messages, bs.succeeded(), ss.succeeded(), ss.retried(), ss.dead());
                    out.flush();
                }
                if (done) {
                    break;
                }
                if (System.nanoTime() > deadline) {
                    out.println("demo did not finish within " + timeout + "; see 'sluice consumer list " + STREAM + "'");
                    return Main.FAILURE;
                }
                Thread.sleep(100);
            }
            double total = seconds(start);
            double produceSeconds = (producedAt.get() - start) / 1e9;
            summary(out, sluice, b.stats(), s.stats(), total, produceSeconds);
        }
        return Main.OK;
    }

    private void produce(Producer<String> producer, AtomicLong produced, AtomicLong producedAt, long start) {
        List<CompletableFuture<?>> window = new ArrayList<>();
        for (int i = 0; i < messages; i++) {
            String key = "customer-" + (i % 200);
            String payload = "{\"order\": " + i + ", \"customer\": \"" + key + "\", \"amount\": " + (10 + i % 90) + "}";
            window.add(producer.produceAsync(payload, ProduceOptions.key(key)).thenRun(produced::incrementAndGet));
            if (window.size() >= 512) {
                window.forEach(CompletableFuture::join);
                window.clear();
            }
        }
        window.forEach(CompletableFuture::join);
        producedAt.set(System.nanoTime());
    }

    /** Shipping fails ~4% of first deliveries (they recover on retry) and ~0.3% for good (they die). */
    static Outcome shippingOutcome(long id, int attempt) {
        int bucket = Math.floorMod(Long.hashCode(id * 0x9E3779B97F4A7C15L), 1000);
        if (bucket < 3) {
            throw new IllegalStateException("carrier rejected the parcel (demo failure)");
        }
        if (bucket < 40 && attempt == 1) {
            throw new IllegalStateException("carrier API timed out (demo failure, recovers on retry)");
        }
        return Outcome.success();
    }

    private void summary(PrintWriter out, Sluice sluice, ConsumptionStats b, ConsumptionStats s, double total, double produceSeconds) {
        Map<String, GroupInfo> groups = new java.util.HashMap<>();
        for (GroupInfo g : sluice.stream(STREAM).consumerGroups()) {
            groups.put(g.name(), g);
        }
        out.println();
        out.printf("produced %,d messages in %.1fs (%,.0f msgs/s)%n", messages, produceSeconds, messages / Math.max(0.001, produceSeconds));
        List<List<String>> rows = new ArrayList<>();
        rows.add(row("billing", b, groups.get("billing"), total));
        rows.add(row("shipping", s, groups.get("shipping"), total));
        Output.table(out, List.of("GROUP", "DELIVERED", "SUCCEEDED", "RETRIES", "DEAD", "LAG", "RATE"), rows);
        out.println();
        out.println("dead letters: sluice consumer dead " + STREAM + " shipping      redrive: sluice consumer redrive "
                + STREAM + " shipping --all");
        out.flush();
    }

    private static List<String> row(String name, ConsumptionStats st, GroupInfo g, double seconds) {
        return List.of(name, String.format("%,d", st.delivered()), String.format("%,d", st.succeeded()),
                String.format("%,d", st.retried()), String.format("%,d", g == null ? st.dead() : g.dead()),
                g == null ? "?" : String.format("%,d", g.lag()), String.format("%,.0f msgs/s", st.delivered() / Math.max(0.001, seconds)));
    }

    private static double seconds(long start) {
        return (System.nanoTime() - start) / 1e9;
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
