package dev.sluice.cli;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.ErrorCode;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import dev.sluice.internal.jdbc.DatabaseUrls;
import dev.sluice.server.SluiceServer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code sluice serve}: the HTTP API, Prometheus metrics and the dashboard on one port, on the embedded default
 * or any database; it competes for the schema's manager like an application, and stops cleanly on Ctrl-C or
 * SIGTERM (HTTP claims out get the drain time, then what is unresolved is given back).
 */
@Command(name = "serve", description = {"Serve the HTTP API (/api/v1), Prometheus metrics (/metrics) and the dashboard (/).",
        "Requests need a token ('sluice token create'); with no token at all the server runs in open mode, on a loopback "
                + "address only. Stops on Ctrl-C."})
final class ServeCommand extends Base {
    @Option(names = "--port", paramLabel = "PORT", defaultValue = "7070", description = "Port (default: ${DEFAULT-VALUE}; 0 picks a free one).")
    int port;

    @Option(names = "--bind", paramLabel = "ADDRESS", defaultValue = "127.0.0.1",
            description = "Address to listen on (default: ${DEFAULT-VALUE}). Any other than loopback needs a token to exist.")
    String bind;

    @Option(names = "--demo", description = "Also run the demo workload: a producer, groups that succeed, retry and dead-letter, "
            + "a queue with failing jobs and a schedule, so the dashboard shows live data at once.")
    boolean demo;

    @Option(names = "--demo-rate", paramLabel = "N", defaultValue = "50", description = "Demo messages per second (default: ${DEFAULT-VALUE}).")
    int demoRate;

    @Option(names = "--metrics-public", description = "Serve /metrics without a token.")
    boolean metricsPublic;

    @Option(names = "--max-body", paramLabel = "BYTES", defaultValue = "16777216",
            description = "Largest request body (default: ${DEFAULT-VALUE}, 16 MiB).")
    long maxBody;

    @Option(names = "--maintenance-interval", paramLabel = "DURATION", defaultValue = "15s",
            description = "How often the manager runs its pass, metric snapshots included (default: ${DEFAULT-VALUE}).")
    String maintenanceInterval;

    @Option(names = "--for", paramLabel = "DURATION", description = "Stop after this long (e.g. 30s); default: until Ctrl-C.")
    String runFor;

    @Override
    public Integer call() throws InterruptedException {
        Duration limit = runFor == null ? null : Durations.parse(runFor);
        Duration interval = Durations.parse(maintenanceInterval);
        if (demoRate < 1 || demoRate > 10_000) {
            throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "--demo-rate must be between 1 and 10000");
        }
        CountDownLatch stop = new CountDownLatch(1);
        CountDownLatch stopped = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            stop.countDown();
            try {
                stopped.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "sluice-serve-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        PrintWriter out = out();
        try (CliContext ctx = open()) {
            ctx.sluice().streams(); // one round trip first: an unreachable database is a coded error
            HikariConfig hc = new HikariConfig();
            hc.setDataSource(DatabaseUrls.dataSource(ctx.jdbcUrl()));
            hc.setMaximumPoolSize(24);
            // Named, not detected: HikariCP reads the isolation of its first connection, and when that connection fails
            // during the read it keeps -1 and every later connection fails to set it (HikariCP issue #1944) — a pool
            // started while its server terminates connections would never hand out one (docs/getting-started.md).
            hc.setTransactionIsolation("TRANSACTION_READ_COMMITTED");
            hc.setPoolName("sluice-serve");
            PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
            try (HikariDataSource pool = new HikariDataSource(hc);
                 Sluice sluice = Sluice.builder().dataSource(pool).schema(globals().schema).forceSchema(globals().forceSchema)
                         .maintenance(true).maintenanceInterval(interval).meterRegistry(registry).build();
                 SluiceServer server = SluiceServer.builder(sluice).bind(bind).port(port).maxBodyBytes(maxBody)
                         .metricsPublic(metricsPublic).registry(registry).start();
                 DemoWorkload workload = demo ? new DemoWorkload(sluice, demoRate) : null) {
                sluice.system().register();
                out.println("sluice serve: dashboard " + server.url() + "   API " + server.url() + "api/v1/   metrics "
                        + server.url() + "metrics");
                if (server.openMode()) {
                    out.println("open mode: no API token exists, so requests without one are let in (loopback only);"
                            + " create one with 'sluice token create --role admin'");
                }
                if (workload != null) {
                    out.println("demo workload: stream '" + DemoCommand.STREAM + "' (groups billing, shipping), queue '"
                            + DemoWorkload.QUEUE + "', schedule 'demo.tick'");
                }
                out.println(limit == null ? "press Ctrl-C to stop" : "stopping after " + Durations.format(limit));
                out.flush();
                if (limit == null) {
                    stop.await();
                } else {
                    stop.await(limit.toMillis(), TimeUnit.MILLISECONDS);
                }
                out.println("sluice serve: stopping");
                out.flush();
            }
        } finally {
            stopped.countDown();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the JVM is exiting (Ctrl-C): the hook already ran
            }
        }
        return Main.OK;
    }
}
