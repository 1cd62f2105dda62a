package dev.sluice.bench.lab;

import dev.sluice.ScheduleRunner;
import dev.sluice.ScheduleSpec;
import dev.sluice.Sluice;
import dev.sluice.StreamConfig;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The schedule engine of the lab: a handful of schedules ({@code @every} and seconds-field cron, into a stream and
 * into a queue) fired by a {@link ScheduleRunner} in every producer and consumer process, while the orchestrator
 * kills those processes, terminates their backends and restarts the server. Each schedule catches up every missed
 * due time, so the run's fires must be exactly one per due time from its first fire to its last; {@link
 * ScheduleChecker} counts them in Sluice's own tables (the fires carry their schedule and due time as headers).
 *
 * <p>Each runner's fire count goes to the ledger every 2 s ({@code schedule_runner}), which shows how the processes
 * shared the work; the checker does not rely on it (a killed process loses its last count).
 */
final class ScheduleEngine implements LabEngine {
    static final String NAME = "schedule";
    /** The stream the stream-target schedules fire into (no retention: the checker reads every fire). */
    static final String STREAM = "lab.ticks";
    /** The queue the queue-target schedule fires into (no worker: its jobs stay live, one per due time). */
    static final String QUEUE = "lab-ticks";

    /** One lab schedule: its name, expression, zone, whether it fires into the queue, and its due-time interval. */
    record Plan(String name, String expression, String zone, boolean queue, Duration interval) {
    }

    /** The lab's schedules; every expression has a constant interval, so the checker can list its due times. */
    static final List<Plan> PLANS = List.of(
            new Plan("lab-every-1s", "@every 1s", "UTC", false, Duration.ofSeconds(1)),
            new Plan("lab-every-2s", "@every 2s", "UTC", false, Duration.ofSeconds(2)),
            new Plan("lab-cron-3s", "*/3 * * * * *", "Europe/Berlin", false, Duration.ofSeconds(3)),
            new Plan("lab-cron-1s", "* * * * * *", "America/New_York", false, Duration.ofSeconds(1)),
            new Plan("lab-every-1s-queue", "@every 1s", "UTC", true, Duration.ofSeconds(1)));

    static final LedgerWriter.Table RUNNER = LedgerWriter.table("schedule_runner", "instance", "fires", "at");

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public String ddl() {
        return """
            CREATE TABLE sluice_lab.schedule_runner (
                instance  text NOT NULL,
                fires     bigint NOT NULL,
                at        timestamptz NOT NULL
            );
            """;
    }

    @Override
    public void setUp(Sluice sluice) {
        sluice.stream(STREAM).register(StreamConfig.builder().build());
        for (Plan p : PLANS) {
            ScheduleSpec.Builder b = ScheduleSpec.builder(p.expression()).zone(p.zone()).catchUp(ScheduleSpec.Misfire.MAX_CATCH_UP)
                    .payload(p.name().getBytes(java.nio.charset.StandardCharsets.UTF_8), "text/plain");
            sluice.schedule(p.name()).register((p.queue() ? b.toQueue(QUEUE) : b.toStream(STREAM)).build());
        }
    }

    @Override
    public AutoCloseable startProducer(Context ctx) {
        return run(ctx);
    }

    @Override
    public AutoCloseable startConsumer(Context ctx) {
        return LabEngine.closedOnStop(run(ctx), "lab-schedule-runner-close");
    }

    /** One runner in this process, and its fire count to the ledger every 2 s and at the close. */
    private static AutoCloseable run(Context ctx) {
        ScheduleRunner runner = ctx.sluice().runSchedules();
        ScheduledExecutorService count = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "lab-schedule-count");
            t.setDaemon(true);
            return t;
        });
        count.scheduleWithFixedDelay(() -> ctx.ledger().append(RUNNER, ctx.instance(), runner.fires(), Instant.now()),
                2, 2, TimeUnit.SECONDS);
        return () -> {
            count.shutdownNow();
            runner.close();
            ctx.ledger().append(RUNNER, ctx.instance(), runner.fires(), Instant.now());
        };
    }

    @Override
    public Section check(Connection c, boolean drained) throws SQLException {
        return ScheduleChecker.check(c);
    }
}
