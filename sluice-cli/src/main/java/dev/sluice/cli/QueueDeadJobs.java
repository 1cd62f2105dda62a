package dev.sluice.cli;

import dev.sluice.DeadJob;
import dev.sluice.ErrorCode;
import dev.sluice.Page;
import dev.sluice.Queue;
import dev.sluice.SluiceException;
import dev.sluice.server.json.QueueDocuments;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code sluice queue dead}, {@code redrive} (former name {@code revive}) and {@code purge}: the operator's dead-job actions. */
final class QueueDeadJobs {
    /** Dead jobs read per round trip while checking the ids an operator named. */
    private static final int CHECK_PAGE = 1_000;

    private QueueDeadJobs() {
    }

    @Command(name = "dead", description = "Dead jobs of a queue in id order, a page at a time.")
    static final class Dead extends Base {
        @Parameters(paramLabel = "QUEUE", description = "Queue name.")
        String queue;

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
            try (CliContext ctx = open()) {
                Page<DeadJob> p = ctx.sluice().queue(queue).admin().deadLetters(cursor, limit);
                if (json()) {
                    QueueCommand.page(out(), p.items().stream().map(QueueDocuments::dead).toList(), p.next());
                } else if (p.items().isEmpty()) {
                    out().println("no dead jobs in queue '" + queue + "'");
                } else {
                    List<List<String>> rows = new ArrayList<>();
                    for (DeadJob d : p.items()) {
                        rows.add(List.of(Long.toString(d.id()), d.reason().dbValue(),
                                d.attempts() + "/" + d.maxAttempts(), d.diedAt().toString(),
                                d.uniqueKey() == null ? "-" : d.uniqueKey(), QueueCommand.brief(d.lastError())));
                    }
                    Output.table(out(), List.of("ID", "REASON", "ATTEMPTS", "DIED_AT", "KEY", "LAST_ERROR"), rows);
                    QueueCommand.nextPage(out(), p.next());
                }
            }
            return Main.OK;
        }
    }

    @Command(name = "redrive", description = {"Move dead jobs back to pending under their ids, due now, attempts reset:",
            "the named ids (all or none: every id must be a dead job of the queue), or --all (a bounded batch per",
            "transaction; a dead job whose unique key a live job holds stays dead)."})
    static class Redrive extends Base {
        @Parameters(index = "0", paramLabel = "QUEUE", description = "Queue name.")
        String queue;

        @Parameters(index = "1..*", arity = "0..*", paramLabel = "ID", description = "Ids of dead jobs.")
        List<Long> ids = new ArrayList<>();

        @Option(names = "--all", description = "Every dead job of the queue.")
        boolean all;

        /** The word the output uses ({@code revive}, the former name, keeps its own). */
        String done() {
            return "redriven";
        }

        @Override
        public Integer call() {
            if (all == !ids.isEmpty()) {
                throw new Main.UsageException("name the dead jobs to redrive by id, or pass --all (not both)");
            }
            try (CliContext ctx = open()) {
                Queue<byte[]> q = ctx.sluice().queue(queue);
                int n;
                if (all) {
                    n = q.admin().redriveAll();
                } else {
                    requireDead(q, ids, done());
                    // One transaction: every id, or none (another operator or the retention sweep may have got
                    // to one since the check).
                    n = q.admin().redrive(List.copyOf(new TreeSet<>(ids)));
                }
                report(this, done(), n);
            }
            return Main.OK;
        }
    }

    /** The former name of {@code redrive}, kept working (hidden); prints "revived" as it always did. */
    @Command(name = "revive", hidden = true, description = "Former name of 'queue redrive'.")
    static final class Revive extends Redrive {
        @Override
        String done() {
            return "revived";
        }
    }

    @Command(name = "purge", description = {"Delete dead jobs for good: the named ids, or --all. Needs --yes.",
            "Every id must be a dead job of the queue; otherwise nothing is purged."})
    static final class Purge extends Base {
        @Parameters(index = "0", paramLabel = "QUEUE", description = "Queue name.")
        String queue;

        @Parameters(index = "1..*", arity = "0..*", paramLabel = "ID", description = "Ids of dead jobs.")
        List<Long> ids = new ArrayList<>();

        @Option(names = "--all", description = "Every dead job of the queue.")
        boolean all;

        @Option(names = "--yes", description = "Confirm: purged jobs cannot be redriven.")
        boolean yes;

        @Override
        public Integer call() {
            if (all == !ids.isEmpty()) {
                throw new Main.UsageException("name the dead jobs to purge by id, or pass --all (not both)");
            }
            if (!yes) {
                throw new Main.UsageException("purging dead jobs cannot be undone; add --yes to confirm");
            }
            try (CliContext ctx = open()) {
                Queue<byte[]> q = ctx.sluice().queue(queue);
                int n;
                if (all) {
                    n = q.admin().purgeAll();
                } else {
                    requireDead(q, ids, "purged");
                    n = q.admin().purge(List.copyOf(new TreeSet<>(ids)));
                }
                report(this, "purged", n);
            }
            return Main.OK;
        }
    }

    /**
     * Raises {@link ErrorCode#JOB_NOT_FOUND} unless every id is a dead job of the queue. Reads the dead
     * jobs in id order up to the highest id named (the core has no lookup of one dead job).
     */
    static void requireDead(Queue<byte[]> q, Collection<Long> ids, String action) {
        Set<Long> missing = new TreeSet<>(ids);
        long highest = Collections.max(ids);
        String cursor = null;
        do {
            Page<DeadJob> page = q.admin().deadLetters(cursor, CHECK_PAGE);
            page.items().forEach(d -> missing.remove(d.id()));
            if (missing.isEmpty() || page.items().isEmpty() || page.items().get(page.items().size() - 1).id() >= highest) {
                break;
            }
            cursor = page.next();
        } while (cursor != null);
        if (!missing.isEmpty()) {
            String named = String.join(", ", missing.stream().map(String::valueOf).toList());
            throw new SluiceException(ErrorCode.JOB_NOT_FOUND, (missing.size() == 1 ? "job " : "jobs ") + named
                    + (missing.size() == 1 ? " is not a dead job" : " are not dead jobs") + " of queue '" + q.name()
                    + "'; nothing was " + action);
        }
    }

    static void report(Base cmd, String what, int n) {
        if (cmd.json()) {
            Output.json(cmd.out(), Map.of(what, n));
        } else {
            cmd.out().println(what + " " + n + " dead job" + (n == 1 ? "" : "s"));
        }
    }
}
