package dev.sluice.bench.lab;

import dev.sluice.DeadJob;
import dev.sluice.DeadReason;
import dev.sluice.ErrorCode;
import dev.sluice.JobRun;
import dev.sluice.Page;
import dev.sluice.Queue;
import dev.sluice.SluiceException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The queue engine's part of a producer process: the enqueuer (paced at the job rate), the reviver (redrives the jobs
 * that died of failures every second) and the completion waiters. Every loop catches, logs and goes on: the
 * connections are terminated and the server restarted under it.
 */
final class QueueProducer implements AutoCloseable {
    /** How long a completion wait may take in all (its awaits are retried across faults). */
    private static final Duration WAIT_FOR = Duration.ofSeconds(30);
    private static final Duration AWAIT_STEP = Duration.ofSeconds(5);

    private final LabEngine.Context ctx;
    private final Queue<String> queue;
    private final Random random;
    private final Thread enqueuer;
    private final Thread reviver;
    private final ThreadPoolExecutor waiters = (ThreadPoolExecutor) Executors.newFixedThreadPool(4);
    /**
     * The enqueue calls, 8 at a time: each waits for its durable ledger row and its own commit, so one at a time would
     * hold the job rate to a few commits' latency; the pacer waits when all 8 are busy and 32 are queued.
     */
    private final ThreadPoolExecutor enqueues = new ThreadPoolExecutor(8, 8, 1, TimeUnit.MINUTES,
            new java.util.concurrent.ArrayBlockingQueue<>(32), new ThreadPoolExecutor.CallerRunsPolicy());
    private volatile boolean stopping;
    /** Unique keys this process used (re-used later: once the job ended the key is free and makes a new job). */
    private final List<String> usedKeys = new ArrayList<>();
    /** The key of a job just enqueued with a delay, repeated by the next few jobs (deduplicated while it lives). */
    private String repeatKey;
    private int repeatsLeft;
    private long errors;

    private QueueProducer(LabEngine.Context ctx, Queue<String> queue) {
        this.ctx = ctx;
        this.queue = queue;
        this.random = new Random(ctx.seed() ^ ctx.instance().hashCode() ^ 0x5155);
        this.enqueuer = new Thread(this::enqueueLoop, "lab-queue-enqueuer");
        this.reviver = new Thread(this::reviveLoop, "lab-queue-reviver");
    }

    static QueueProducer start(LabEngine.Context ctx, Queue<String> queue) {
        QueueProducer p = new QueueProducer(ctx, queue);
        p.enqueuer.start();
        p.reviver.start();
        return p;
    }

    // ------------------------------------------------------------------ enqueue

    /**
     * Paces the enqueues in ticks of {@link #TICK_NANOS}: each tick plans the jobs the rate owes, queues their attempt
     * rows together, and hands each job to an enqueue thread that waits for its row before the call. The rows of one
     * tick share one ledger flush (a waited row takes its table's queued rows along), where a row per job used to be a
     * flush per job.
     */
    private void enqueueLoop() {
        long start = System.nanoTime();
        long end = start + TimeUnit.MILLISECONDS.toNanos(ctx.durationMs());
        long n = 0;
        while (!stopping && System.nanoTime() < end) {
            try {
                long owed = Math.min(end, System.nanoTime()) - start;
                long due = owed * ctx.jobRate() / 1_000_000_000L + 1; // the first job at once, as before
                List<Planned> tick = new ArrayList<>();
                while (n < due) {
                    n++;
                    tick.add(plan(ctx.instance() + "-j" + n));
                }
                for (Planned job : tick) {
                    // Durable before the call (the enqueue thread waits for it): a job in Sluice's tables always has
                    // its ledger row.
                    LedgerWriter.Pending attempt = ctx.ledger().append(QueueEngine.ENQUEUE, job.row(ctx.instance(), "attempt", null, null, null));
                    enqueues.execute(() -> {
                        try {
                            enqueue(job, attempt);
                        } catch (RuntimeException e) {
                            log("enqueue", e);
                        }
                    });
                }
                TimeUnit.NANOSECONDS.sleep(TICK_NANOS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (RuntimeException e) {
                log("enqueue loop", e);
            }
        }
    }

    /** How often the pacer plans the jobs owed (25 jobs/s: 2-3 a tick). */
    private static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    /** A job planned by the pacer. */
    private record Planned(String tag, String plan, int priority, long delayMs, String key, boolean awaited, Instant started) {
        /** Its {@code queue_enqueue} row: the attempt (no outcome yet, no end) or the call's outcome. */
        Object[] row(String producer, String outcome, Long jobId, String error, Instant ended) {
            return new Object[] {tag, producer, plan, priority, delayMs, key, awaited, outcome, jobId, error, started, ended};
        }
    }

    private Planned plan(String tag) {
        String plan = plan();
        int priority = switch (random.nextInt(6)) {
            case 0 -> -2;
            case 1 -> 1;
            case 2 -> 5;
            default -> 0;
        };
        long delayMs = random.nextInt(5) == 0 ? random.nextInt(2001) : 0;
        String key = null;
        boolean wait = false;
        double r = random.nextDouble();
        if (repeatsLeft > 0) {
            // A repeat of a key whose job was just enqueued with a delay: deduplicated (the live job's id).
            key = repeatKey;
            repeatsLeft--;
        } else if (r < 0.08) {
            key = "u-" + tag;
            repeatKey = key;
            repeatsLeft = 1 + random.nextInt(2);
            delayMs = 1000 + random.nextInt(1001);
            if (usedKeys.size() < 1000) {
                usedKeys.add(key);
            }
        } else if (r < 0.10 && !usedKeys.isEmpty()) {
            key = usedKeys.get(random.nextInt(usedKeys.size())); // free again once its job ended: a new job
        } else if (r < 0.11) {
            key = "bad\u0001key"; // invalid: rejected before any round trip, nothing written
        } else if (r < 0.16 && (OK.equals(plan) || QueueEngine.TERMINAL.equals(plan)) && waiters.getQueue().size() < 50) {
            wait = true;
        }
        return new Planned(tag, plan, priority, delayMs, key, wait, Instant.now());
    }

    private static final String OK = QueueEngine.OK;

    private String plan() {
        double r = random.nextDouble();
        double hang = ctx.hangRate();
        double fail = ctx.failureRate();
        if (r < hang) {
            return QueueEngine.HANG;
        }
        if (r < hang + fail) {
            return QueueEngine.TRANSIENT;
        }
        if (r < hang + fail + 0.03) {
            return QueueEngine.TERMINAL;
        }
        if (r < hang + fail + 0.07) {
            return QueueEngine.EXHAUST;
        }
        return OK;
    }

    private void enqueue(Planned job, LedgerWriter.Pending attempt) {
        LedgerWriter ledger = ctx.ledger();
        ledger.await(attempt); // throws when the row could not be written: then nothing is enqueued
        String outcome;
        Long id = null;
        String error = null;
        try {
            id = queue.enqueue(payload(job.tag, job.plan),
                    QueueEngine.enqueueOptions(job.tag, job.plan, job.priority, job.delayMs, job.key));
            outcome = "ok";
        } catch (SluiceException e) {
            outcome = unknown(e) ? "unknown" : "rejected";
            error = e.code() + ": " + LabOptions.clean(String.valueOf(e.getMessage()));
        } catch (RuntimeException e) {
            outcome = "unknown";
            error = LabOptions.clean(String.valueOf(e));
        }
        ledger.append(QueueEngine.ENQUEUE, job.row(ctx.instance(), outcome, id, error, Instant.now()));
        if (job.awaited && id != null) {
            long jobId = id;
            waiters.submit(() -> await(job.tag, jobId));
        }
    }

    /** Whether the enqueue may have committed: the database's failures; a rejected argument wrote nothing. */
    private static boolean unknown(SluiceException e) {
        return e.code() == ErrorCode.COMMIT_OUTCOME_UNKNOWN || e.code() == ErrorCode.DATABASE_UNAVAILABLE
                || e.code() == ErrorCode.DATABASE_ERROR || e.retryable();
    }

    static String payload(String tag, String plan) {
        return "{\"tag\": \"" + tag + "\", \"plan\": \"" + plan + "\"}";
    }

    // ------------------------------------------------------------------ completion waits

    /** Awaits the job's end (re-awaiting across faults), records what the await returned. */
    private void await(String tag, long id) {
        Instant started = Instant.now();
        long deadline = System.nanoTime() + WAIT_FOR.toNanos();
        String lastError = null;
        while (System.nanoTime() < deadline) {
            try {
                JobRun run = queue.await(id, AWAIT_STEP);
                String result = run.result() == null ? null : new String(run.result(), java.nio.charset.StandardCharsets.UTF_8);
                ctx.ledger().append(QueueEngine.WAIT, ctx.instance(), tag, id, "ended", run.status().dbValue(), result, null,
                        started, Instant.now());
                return;
            } catch (SluiceException e) {
                if (e.code() != ErrorCode.AWAIT_TIMEOUT) {
                    lastError = e.code() + ": " + LabOptions.clean(String.valueOf(e.getMessage()));
                    sleep(200);
                }
            } catch (RuntimeException e) {
                lastError = LabOptions.clean(String.valueOf(e));
                sleep(200);
            }
        }
        ctx.ledger().append(QueueEngine.WAIT, ctx.instance(), tag, id, lastError == null ? "timeout" : "error", null, null,
                lastError, started, Instant.now());
    }

    // ------------------------------------------------------------------ revives

    /** Every second: redrives the dead jobs whose plan fails until revived (the terminal ones stay dead). */
    private void reviveLoop() {
        while (!stopping) {
            try {
                sleep(1000);
                String cursor = null;
                for (int page = 0; page < 20 && !stopping; page++) {
                    Page<DeadJob> dead = queue.admin().deadLetters(cursor, 100);
                    for (DeadJob d : dead.items()) {
                        if (QueueEngine.EXHAUST.equals(d.headers().get(QueueEngine.PLAN_HEADER)) && d.reason() == DeadReason.FAILED) {
                            revive(d);
                        }
                    }
                    cursor = dead.next();
                    if (cursor == null) {
                        break;
                    }
                }
            } catch (RuntimeException e) {
                log("revive loop", e);
            }
        }
    }

    private void revive(DeadJob d) {
        String tag = d.headers().get(QueueEngine.TAG_HEADER);
        Instant started = Instant.now();
        // Durable before the redrive: the revived job's handler looks for it (and succeeds).
        ctx.ledger().write(QueueEngine.REVIVE, ctx.instance(), d.id(), tag, "attempt", null, started, null);
        String outcome;
        String error = null;
        try {
            outcome = queue.admin().redrive(d.id()) ? "revived" : "absent";
        } catch (SluiceException e) {
            outcome = e.code() == ErrorCode.UNIQUE_KEY_TAKEN ? "refused" : "error";
            error = e.code() + ": " + LabOptions.clean(String.valueOf(e.getMessage()));
        }
        ctx.ledger().append(QueueEngine.REVIVE, ctx.instance(), d.id(), tag, outcome, error, started, Instant.now());
    }

    // ------------------------------------------------------------------ plumbing

    private void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stopping = true;
        }
    }

    private synchronized void log(String where, Throwable e) {
        if (++errors <= 50 || errors % 100 == 0) {
            System.err.println(Instant.now() + " lab queue " + ctx.instance() + ": " + where + " (error " + errors + "): " + e);
        }
    }

    /** Stops the enqueuer at once (it stops by itself after the run's duration), the reviver, then the waiters. */
    @Override
    public void close() throws InterruptedException {
        enqueuer.join(ctx.durationMs() + 30_000);
        enqueues.shutdown();
        enqueues.awaitTermination(30, TimeUnit.SECONDS);
        stopping = true;
        enqueuer.interrupt();
        reviver.interrupt();
        reviver.join(10_000);
        waiters.shutdown();
        if (!waiters.awaitTermination(WAIT_FOR.toSeconds() + 10, TimeUnit.SECONDS)) {
            waiters.shutdownNow();
        }
    }
}
