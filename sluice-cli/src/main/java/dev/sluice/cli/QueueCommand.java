package dev.sluice.cli;

import dev.sluice.EnqueueOptions;
import dev.sluice.ErrorCode;
import dev.sluice.JobInfo;
import dev.sluice.JobState;
import dev.sluice.Page;
import dev.sluice.QueueInfo;
import dev.sluice.QueueOptions;
import dev.sluice.SluiceException;
import dev.sluice.server.json.QueueDocuments;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code sluice queue}: list, enqueue and live jobs; the dead-job actions are in {@link QueueDeadJobs}, the runs in {@link QueueRuns}. */
@Command(name = "queue", description = "Job queues: list, enqueue, live jobs, dead jobs, redrive, purge, runs, await, cancel.",
        subcommands = {QueueCommand.ListQueues.class, QueueCommand.Enqueue.class, QueueCommand.Jobs.class,
                QueueDeadJobs.Dead.class, QueueDeadJobs.Redrive.class, QueueDeadJobs.Revive.class,
                QueueDeadJobs.Purge.class, QueueRuns.Runs.class, QueueRuns.Run.class, QueueRuns.Await.class,
                QueueRuns.Cancel.class})
final class QueueCommand {
    @Command(name = "list", description = "Queues with live or dead jobs, with counts by state.")
    static final class ListQueues extends Base {
        @Override
        public Integer call() {
            try (CliContext ctx = open()) {
                List<QueueInfo> queues = ctx.sluice().queues();
                if (json()) {
                    Output.json(out(), queues.stream().map(QueueDocuments::queue).toList());
                } else if (queues.isEmpty()) {
                    out().println("no queues with jobs in schema '" + globals().schema + "'");
                } else {
                    List<List<String>> rows = new ArrayList<>();
                    for (QueueInfo q : queues) {
                        rows.add(List.of(q.name(), Long.toString(q.pending()), Long.toString(q.scheduled()),
                                Long.toString(q.processing()), Long.toString(q.dead()), Long.toString(q.waiting())));
                    }
                    Output.table(out(), List.of("QUEUE", "PENDING", "SCHEDULED", "PROCESSING", "DEAD", "WAITING"), rows);
                }
            }
            return Main.OK;
        }
    }

    @Command(name = "enqueue", description = {"Enqueue one job and print its id.",
            "With --unique-key, a live job holding the key is returned instead (its id is printed; nothing is written).",
            "The job is stamped with the default queue options unless --max-attempts, --visibility-timeout, --keep-runs",
            "or --keep-events is given. With --after it waits until every parent succeeded."})
    static final class Enqueue extends Base {
        @Parameters(paramLabel = "QUEUE", description = "Queue name.")
        String queue;

        @ArgGroup(exclusive = true)
        Source source;

        static final class Source {
            @Option(names = "--data", paramLabel = "TEXT", description = "The payload as text (UTF-8).")
            String text;

            /** The former name of --data, kept working (the same flag as 'stream produce --data'). */
            @Option(names = "--payload", paramLabel = "TEXT", hidden = true)
            String legacyText;

            @Option(names = "--file", paramLabel = "PATH", description = "Read the payload from a file (bytes as they are).")
            Path file;

            @Option(names = "-", description = "Read the payload from standard input.")
            boolean stdin;
        }

        @Option(names = "--priority", paramLabel = "N", description = "Higher runs first (-1000 to 1000; default 0).")
        int priority;

        @ArgGroup(exclusive = true)
        When when;

        static final class When {
            @Option(names = "--delay", paramLabel = "DURATION", description = "Run no earlier than this long from now (e.g. 5s, 15m).")
            String delay;

            @Option(names = "--run-at", paramLabel = "TIME", description = "Run no earlier than this ISO-8601 instant.")
            String runAt;
        }

        @Option(names = "--expires-at", paramLabel = "TIME", description = "Dead (reason expired) if still unclaimed at this ISO-8601 instant.")
        String expiresAt;

        @Option(names = "--unique-key", paramLabel = "K", description = "At most one live job per (queue, key).")
        String uniqueKey;

        @Option(names = "--header", paramLabel = "k=v", description = "A header (repeatable).")
        Map<String, String> headers = new LinkedHashMap<>();

        @Option(names = "--max-attempts", paramLabel = "N", description = "Claims the job may use (default 25).")
        Integer maxAttempts;

        @Option(names = "--visibility-timeout", paramLabel = "DURATION", description = "Claim window without a heartbeat (default 30s).")
        String visibilityTimeout;

        @Option(names = "--keep-runs", paramLabel = "DURATION", description = "Keep the job's run record and event trail this long after it ends (1s to 3650d; default: none).")
        String keepRuns;

        @Option(names = "--keep-events", paramLabel = "DURATION", description = "Keep the event trail this long instead (1s to 3650d; needs --keep-runs).")
        String keepEvents;

        @Option(names = "--after", paramLabel = "ID", split = ",", description = "A parent job id (repeatable or comma-separated): run only once every parent succeeded.")
        List<String> after = new ArrayList<>();

        @Option(names = "--on-parent-failure", paramLabel = "POLICY", description = "cancel (default) or run: what a parent that ends dead, discarded or cancelled does to this job.")
        String onParentFailure;

        @Override
        public Integer call() {
            EnqueueOptions.Builder b = EnqueueOptions.builder().priority(priority).uniqueKey(uniqueKey).headers(headers);
            if (when != null && when.delay != null) {
                b.delay(Durations.parse(when.delay));
            } else if (when != null) {
                b.runAt(ConsumerCommand.time(when.runAt));
            }
            if (expiresAt != null) {
                b.expiresAt(ConsumerCommand.time(expiresAt));
            }
            b.after(QueueRuns.parents(after));
            if (onParentFailure != null) {
                b.onParentFailure(QueueRuns.parentFailure(onParentFailure));
            }
            QueueOptions.Builder stamped = QueueOptions.builder();
            if (maxAttempts != null) {
                stamped.maxAttempts(maxAttempts);
            }
            if (visibilityTimeout != null) {
                stamped.visibilityTimeout(Durations.parse(visibilityTimeout));
            }
            if (keepRuns != null) {
                stamped.keepRuns(Durations.parse(keepRuns));
            }
            if (keepEvents != null) {
                stamped.keepEvents(Durations.parse(keepEvents));
            }
            QueueOptions options = stamped.build();
            EnqueueOptions enqueue = b.build();
            // A file is opened before the database is, so a missing one fails fast.
            try (PayloadInput input = source == null ? null : PayloadInput.open(source.file, source.stdin);
                 CliContext ctx = open()) {
                byte[] payload = input != null ? input.read(options.maxPayloadBytes()) : text();
                long id = ctx.sluice().queue(queue, byte[].class, options).enqueue(payload, enqueue);
                if (json()) {
                    Map<String, Object> doc = new LinkedHashMap<>();
                    doc.put("id", id);
                    doc.put("queue", queue);
                    Output.json(out(), doc);
                } else {
                    out().println(id);
                }
            }
            return Main.OK;
        }

        private byte[] text() {
            String text = source == null ? null : source.text != null ? source.text : source.legacyText;
            return text == null ? new byte[0] : text.getBytes(StandardCharsets.UTF_8);
        }
    }

    @Command(name = "jobs", description = {"Live jobs of one state, a page at a time.",
            "pending: in claim order (priority, run_at, id); processing: by claim expiry; waiting (for parents): by id."})
    static final class Jobs extends Base {
        @Parameters(paramLabel = "QUEUE", description = "Queue name.")
        String queue;

        @Option(names = "--state", paramLabel = "STATE", defaultValue = "pending",
                description = "pending (default), processing or waiting.")
        String state;

        @Option(names = "--limit", paramLabel = "N", defaultValue = "50", description = "Page size, 1 to 1000 (default: ${DEFAULT-VALUE}).")
        int limit;

        @Option(names = "--cursor", paramLabel = "CURSOR", description = "The 'next' cursor printed by the previous page.")
        String cursor;

        /** The former second name of --cursor, kept working. */
        @Option(names = "--page", paramLabel = "CURSOR", hidden = true)
        void legacyCursor(String value) {
            cursor = value;
        }

        @Override
        public Integer call() {
            JobState s = state(state);
            try (CliContext ctx = open()) {
                Page<JobInfo> p = ctx.sluice().queue(queue).admin().jobs(s, cursor, limit);
                if (json()) {
                    page(out(), p.items().stream().map(QueueDocuments::job).toList(), p.next());
                } else if (p.items().isEmpty()) {
                    out().println("no " + s.dbValue() + " jobs in queue '" + queue + "'");
                } else {
                    List<List<String>> rows = new ArrayList<>();
                    for (JobInfo j : p.items()) {
                        String attempts = j.attempts() + "/" + j.maxAttempts();
                        String key = j.uniqueKey() == null ? "-" : j.uniqueKey();
                        rows.add(s != JobState.PROCESSING
                                ? List.of(Long.toString(j.id()), Integer.toString(j.priority()), j.runAt().toString(), attempts, key,
                                        Integer.toString(j.payloadBytes()), brief(j.lastError()))
                                : List.of(Long.toString(j.id()), Integer.toString(j.priority()), attempts, String.valueOf(j.workerId()),
                                        String.valueOf(j.claimExpiresAt()), key, Integer.toString(j.payloadBytes())));
                    }
                    Output.table(out(), s != JobState.PROCESSING
                            ? List.of("ID", "PRIORITY", "RUN_AT", "ATTEMPTS", "KEY", "BYTES", "LAST_ERROR")
                            : List.of("ID", "PRIORITY", "ATTEMPTS", "WORKER", "CLAIM_EXPIRES_AT", "KEY", "BYTES"), rows);
                    nextPage(out(), p.next());
                }
            }
            return Main.OK;
        }
    }

    static JobState state(String s) {
        return switch (s.trim().toLowerCase(Locale.ROOT)) {
            case "pending" -> JobState.PENDING;
            case "processing" -> JobState.PROCESSING;
            case "waiting" -> JobState.WAITING;
            default -> throw new SluiceException(ErrorCode.INVALID_QUEUE_OPTIONS, "'" + Terminal.echo(s)
                    + "' is not a live job state; use pending, processing or waiting (dead jobs: 'sluice queue dead')");
        };
    }

    /** A JSON page: {"items": [...], "next": cursor or null}. */
    static void page(java.io.PrintWriter out, List<Map<String, Object>> items, String next) {
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("items", items);
        doc.put("next", next);
        Output.json(out, doc);
    }

    static void nextPage(java.io.PrintWriter out, String next) {
        if (next != null) {
            out.println("next page: --cursor " + next);
        }
    }

    /** One line of at most 80 characters. */
    static String brief(String error) {
        String e = error == null ? "" : error.replaceAll("\\s+", " ");
        return e.length() > 80 ? e.substring(0, 80) + "..." : e;
    }
}
