package dev.sluice.cli;

import dev.sluice.Cancellation;
import dev.sluice.ErrorCode;
import dev.sluice.JobRun;
import dev.sluice.Page;
import dev.sluice.ParentFailure;
import dev.sluice.Queue;
import dev.sluice.RunEvent;
import dev.sluice.RunQuery;
import dev.sluice.RunStatus;
import dev.sluice.SluiceException;
import dev.sluice.server.json.QueueDocuments;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code sluice queue runs}, {@code run}, {@code await} and {@code cancel}: a queue's job runs (the records ended jobs
 * leave when they keep runs, their event trails, completion waits and cancellation), and the parsing of the enqueue
 * flags {@code --after} and {@code --on-parent-failure}.
 */
final class QueueRuns {
    private QueueRuns() {
    }

    @Command(name = "runs", description = {"Run records of a queue, newest first, a page at a time.",
            "Only jobs enqueued with --keep-runs (QueueOptions.keepRuns) leave a record when they end;",
            "filters combine with AND; keep them on every page (the cursor holds only the position)."})
    static final class Runs extends Base {
        @Parameters(paramLabel = "QUEUE", description = "Queue name.")
        String queue;

        @Option(names = "--status", paramLabel = "STATUS", split = ",",
                description = "Only runs that ended so: succeeded, discarded, dead or cancelled (repeatable or comma-separated).")
        List<String> statuses = new ArrayList<>();

        @Option(names = "--since", paramLabel = "TIME", description = "Finished at or after this ISO-8601 instant.")
        String since;

        @Option(names = "--until", paramLabel = "TIME", description = "Finished before this ISO-8601 instant.")
        String until;

        @Option(names = "--unique-key", paramLabel = "K", description = "Only runs of jobs with this unique key.")
        String uniqueKey;

        @Option(names = "--header", paramLabel = "NAME=VALUE", description = "Only runs whose headers hold this pair (one).")
        Map<String, String> header = new LinkedHashMap<>();

        @Option(names = "--limit", paramLabel = "N", defaultValue = "50", description = "Page size, 1 to 1000 (default: ${DEFAULT-VALUE}).")
        int limit;

        @Option(names = "--cursor", paramLabel = "CURSOR", description = "The 'next' cursor printed by the previous page.")
        String cursor;

        @Override
        public Integer call() {
            if (header.size() > 1) {
                throw new Main.UsageException("--header filters on one NAME=VALUE pair (got " + header.size() + ")");
            }
            RunQuery.Builder b = RunQuery.builder().uniqueKey(uniqueKey).cursor(cursor).limit(limit);
            statuses.forEach(s -> b.status(RunStatus.parse(s)));
            if (since != null) {
                b.since(ConsumerCommand.time(since));
            }
            if (until != null) {
                b.until(ConsumerCommand.time(until));
            }
            header.forEach(b::header);
            RunQuery query = b.build();
            try (CliContext ctx = open()) {
                Page<JobRun> p = ctx.sluice().queue(queue).runs(query);
                if (json()) {
                    QueueCommand.page(out(), p.items().stream().map(QueueDocuments::run).toList(), p.next());
                } else if (p.items().isEmpty()) {
                    out().println("no runs in queue '" + queue + "'" + (cursor == null && statuses.isEmpty() && since == null
                            && until == null && uniqueKey == null && header.isEmpty()
                            ? " (only jobs enqueued with keepRuns, 'queue enqueue --keep-runs D', leave run records)" : ""));
                } else {
                    List<List<String>> rows = new ArrayList<>();
                    for (JobRun r : p.items()) {
                        rows.add(List.of(Long.toString(r.id()), r.status().dbValue(), r.attempts() + "/" + r.maxAttempts(),
                                dash(r.finishedAt()), took(r), dash(r.workerId()), QueueCommand.brief(why(r))));
                    }
                    Output.table(out(), List.of("ID", "STATUS", "ATTEMPTS", "FINISHED", "DURATION", "WORKER", "REASON"), rows);
                    QueueCommand.nextPage(out(), p.next());
                }
            }
            return Main.OK;
        }
    }

    @Command(name = "run", description = {"One job's run and its event trail in order: the run record of an ended job,",
            "its dead job, or the live job. The result shows as text when it is printable UTF-8, else as base64.",
            "Exit 1 (SLU-0114) when the queue has no trace of the job."})
    static final class Run extends Base {
        @Parameters(index = "0", paramLabel = "QUEUE", description = "Queue name.")
        String queue;

        @Parameters(index = "1", paramLabel = "ID", description = "Job id.")
        long id;

        @Override
        public Integer call() {
            try (CliContext ctx = open()) {
                Queue<byte[]> q = ctx.sluice().queue(queue);
                JobRun r = q.run(id).orElseThrow(() -> notFound(queue, id));
                List<RunEvent> events = q.events(id);
                if (json()) {
                    Map<String, Object> doc = new LinkedHashMap<>();
                    doc.put("run", QueueDocuments.run(r));
                    doc.put("events", events.stream().map(QueueDocuments::event).toList());
                    Output.json(out(), doc);
                } else {
                    Output.fields(out(), fields(r));
                    out().println();
                    if (events.isEmpty()) {
                        out().println("no events (the job keeps no runs, or its trail was swept)");
                    } else {
                        List<List<String>> rows = new ArrayList<>();
                        for (RunEvent e : events) {
                            rows.add(List.of(Integer.toString(e.seq()), e.type().dbValue(), e.at().toString(),
                                    e.attempt() == null ? "-" : e.attempt().toString(), dash(e.workerId()), dash(e.nextDue()),
                                    e.detail() == null ? "-" : QueueCommand.brief(e.detail())));
                        }
                        Output.table(out(), List.of("SEQ", "TYPE", "AT", "ATTEMPT", "WORKER", "NEXT_DUE", "DETAIL"), rows);
                    }
                }
            }
            return Main.OK;
        }
    }

    @Command(name = "await", description = {"Wait until a job ends (succeeded, discarded, dead or cancelled) and print its run.",
            "Exit 0 whatever the status; exit 1 with SLU-0121 when it is still live at the timeout (nothing changed),",
            "SLU-0114 when the queue has no trace of it."})
    static final class Await extends Base {
        @Parameters(index = "0", paramLabel = "QUEUE", description = "Queue name.")
        String queue;

        @Parameters(index = "1", paramLabel = "ID", description = "Job id.")
        long id;

        @Option(names = "--timeout", paramLabel = "DURATION", defaultValue = "30s",
                description = "How long to wait, 0 to 1d (0 only reads; default: ${DEFAULT-VALUE}).")
        String timeout;

        @Override
        public Integer call() {
            Duration wait = Durations.parse(timeout);
            try (CliContext ctx = open()) {
                JobRun r = ctx.sluice().queue(queue).await(id, wait);
                if (json()) {
                    Output.json(out(), QueueDocuments.run(r));
                } else {
                    Output.fields(out(), fields(r));
                }
            }
            return Main.OK;
        }
    }

    @Command(name = "cancel", description = {"Cancel a job: a pending or waiting job ends cancelled at once (its children follow",
            "their --on-parent-failure policy); a running one is flagged and ends cancelled at its worker's next heartbeat",
            "or ack. Prints cancelled, requested or already ended; exit 1 (SLU-0114) when the queue has no trace of it."})
    static final class Cancel extends Base {
        @Parameters(index = "0", paramLabel = "QUEUE", description = "Queue name.")
        String queue;

        @Parameters(index = "1", paramLabel = "ID", description = "Job id.")
        long id;

        @Override
        public Integer call() {
            try (CliContext ctx = open()) {
                Cancellation c = ctx.sluice().queue(queue).cancel(id);
                if (json()) {
                    Map<String, Object> doc = new LinkedHashMap<>();
                    doc.put("id", id);
                    doc.put("result", c.name().toLowerCase(Locale.ROOT));
                    Output.json(out(), doc);
                } else {
                    out().println(switch (c) {
                        case CANCELLED -> "cancelled job " + id;
                        case REQUESTED -> "cancel requested for job " + id + ": it is running and ends cancelled at its"
                                + " worker's next heartbeat or ack";
                        case ALREADY_ENDED -> "job " + id + " already ended; nothing changed (see 'sluice queue run "
                                + queue + " " + id + "')";
                    });
                }
            }
            return Main.OK;
        }
    }

    // ------------------------------------------------------------------ the enqueue flags

    /** The parent ids of {@code --after} (repeatable, comma-separated): each a 64-bit id, else INVALID_ARGUMENT. */
    static List<Long> parents(List<String> given) {
        List<Long> ids = new ArrayList<>(given.size());
        for (String s : given) {
            ids.add(ConsumerCommand.id("--after", s.trim()));
        }
        return ids;
    }

    /** The policy {@code --on-parent-failure} names: cancel or run, else INVALID_QUEUE_OPTIONS (as other job options). */
    static ParentFailure parentFailure(String s) {
        for (ParentFailure p : ParentFailure.values()) {
            if (p.dbValue().equalsIgnoreCase(s.trim())) {
                return p;
            }
        }
        throw new SluiceException(ErrorCode.INVALID_QUEUE_OPTIONS, "--on-parent-failure '" + Terminal.echo(s)
                + "' is not a policy; use cancel (the default) or run");
    }

    // ------------------------------------------------------------------ rendering

    static SluiceException notFound(String queue, long id) {
        return new SluiceException(ErrorCode.JOB_NOT_FOUND, "queue '" + queue + "' has no trace of job " + id
                + " (not live, not dead, no run record)");
    }

    /**
     * The key: value lines of a run, from its JSON document ({@link QueueDocuments#run}) for people: {@code -} for
     * what is not there, attempts as {@code 2/5}, the duration as text, the result as text when printable (each
     * value escaped by {@link Output#fields}).
     */
    static Map<String, Object> fields(JobRun r) {
        Map<String, Object> doc = QueueDocuments.run(r);
        doc.replaceAll((k, v) -> v == null ? "-" : v);
        Map<String, Object> m = new LinkedHashMap<>();
        copy(doc, m, "id", "queue", "status", "reason");
        m.put("attempts", r.attempts() + "/" + r.maxAttempts());
        copy(doc, m, "priority", "enqueued_at", "first_started_at", "finished_at");
        m.put("duration", took(r));
        m.put("worker", doc.get("worker_id"));
        copy(doc, m, "unique_key");
        m.put("headers", r.headers().isEmpty() ? "-" : doc.get("headers"));
        copy(doc, m, "content_type");
        m.put("payload_bytes", r.payload() == null ? "- (purged)" : doc.get("payload_bytes"));
        m.put("last_error", r.lastError() == null ? "-" : QueueCommand.brief(r.lastError()));
        copy(doc, m, "result_content_type");
        if (doc.containsKey("result_text")) {
            m.put("result", doc.get("result_text"));
        } else if (r.result() == null) {
            m.put("result", "-");
        } else {
            m.put("result_base64", doc.get("result_base64"));
        }
        copy(doc, m, "kept_until");
        return m;
    }

    private static void copy(Map<String, Object> from, Map<String, Object> to, String... keys) {
        for (String k : keys) {
            to.put(k, from.get(k));
        }
    }

    static String took(JobRun r) {
        Duration d = QueueDocuments.runDuration(r);
        return d == null ? "-" : MaintenanceCommand.took(d);
    }

    /** Why a run ended: its reason, then its last error (a succeeded run shows none). */
    static String why(JobRun r) {
        String error = r.status() == RunStatus.SUCCEEDED ? null : r.lastError();
        if (r.reason() == null) {
            return error == null ? "-" : error;
        }
        return error == null ? r.reason() : r.reason() + ": " + error;
    }

    static String dash(Object value) {
        return value == null ? "-" : value.toString();
    }
}
