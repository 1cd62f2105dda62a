package dev.sluice.cli;

import dev.sluice.MaintenanceReport;
import dev.sluice.MaintenanceStatus;
import dev.sluice.MetricSnapshot;
import dev.sluice.SweepResult;
import dev.sluice.SweepStatus;
import dev.sluice.server.json.OpsDocuments;
import dev.sluice.server.json.StreamDocuments;
import dev.sluice.server.json.Texts;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;

/**
 * {@code sluice maintenance}: who runs the schema's maintenance and how its sweeps went, one pass now, and the
 * metric snapshots the passes take. None of these commands competes for the manager itself.
 */
@Command(name = "maintenance", description = {"The schema's maintenance: the elected manager and each sweep's last run, "
        + "one pass now, the metric snapshots.",
        "Pause it with 'sluice fleet set-target manager 0', resume with 'sluice fleet set-target manager 1'."},
        subcommands = {MaintenanceCommand.Status.class, MaintenanceCommand.Run.class, MaintenanceCommand.Metrics.class})
final class MaintenanceCommand {

    private MaintenanceCommand() {
    }

    /** A duration as text: {@code 0.412 ms}, {@code 37 ms}, {@code 1.24 s}. */
    static String took(Duration d) {
        long nanos = d.toNanos();
        if (nanos < 10_000_000L) {
            return Texts.millis(d).toPlainString() + " ms";
        }
        if (nanos < 1_000_000_000L) {
            return (nanos / 1_000_000) + " ms";
        }
        return BigDecimal.valueOf(nanos).divide(BigDecimal.valueOf(1_000_000_000L), 2, RoundingMode.HALF_UP).toPlainString() + " s";
    }

    /** An error text on one line, cut for a table cell ({@code -} when there is none). */
    static String errorCell(String error) {
        if (error == null) {
            return "-";
        }
        String one = error.replaceAll("\\s+", " ");
        return one.length() > 100 ? one.substring(0, 100) + "..." : one;
    }

    @Command(name = "status", description = {"Who holds the manager (or none), whether maintenance is paused, and the "
            + "last run of each sweep: when it ended, what it removed, how long it took, its error, who ran it, "
            + "how often it ran and failed in this schema."})
    static final class Status extends Base {
        @Override
        public Integer call() {
            try (CliContext ctx = open()) {
                MaintenanceStatus s = ctx.sluice().maintenance().status();
                if (json()) {
                    Output.json(out(), OpsDocuments.maintenance(s));
                    return Main.OK;
                }
                Map<String, Object> head = new LinkedHashMap<>();
                head.put("manager", s.manager().map(i -> i.holder() + " (since " + i.createdAt() + ", expires "
                        + i.expiresAt() + ")").orElse("none"));
                head.put("paused", s.paused() ? "yes (resume with 'sluice fleet set-target manager 1')" : "no");
                Output.fields(out(), head);
                out().println();
                if (s.sweeps().isEmpty()) {
                    out().println("no sweep has run in schema '" + globals().schema + "' (run one pass with 'sluice maintenance run')");
                } else {
                    List<List<String>> rows = new ArrayList<>();
                    for (SweepStatus w : s.sweeps()) {
                        rows.add(List.of(w.name(), w.lastRunAt().toString(), Long.toString(w.lastRemoved()), took(w.lastTook()),
                                w.runBy() == null ? "-" : w.runBy(), Long.toString(w.runs()), Long.toString(w.failures()),
                                errorCell(w.lastError())));
                    }
                    Output.table(out(), List.of("SWEEP", "LAST_RUN_AT", "REMOVED", "TOOK", "RUN_BY", "RUNS", "FAILURES", "ERROR"), rows);
                }
            }
            return Main.OK;
        }
    }

    @Command(name = "run", description = {"Run one maintenance pass now in this process, whoever the manager is, and "
            + "print each sweep's name, what it removed, how long it took and its error.",
            "Passes are bounded and idempotent: one beside the manager's only shares the work. The pass is recorded "
                    + "(see 'sluice maintenance status'). Installs the control plane when the schema has none.",
            "Exits 1 when any sweep failed (the others still ran; a failed sweep is retried at the next pass)."})
    static final class Run extends Base {
        @Override
        public Integer call() {
            MaintenanceReport report;
            try (CliContext ctx = open()) {
                report = ctx.sluice().maintenance().runOnce();
            }
            long failed = report.sweeps().stream().filter(r -> !r.ok()).count();
            if (json()) {
                Map<String, Object> doc = new LinkedHashMap<>();
                doc.put("ok", report.ok());
                doc.put("took_ms", Texts.millis(report.took()));
                doc.put("sweeps", report.sweeps().stream().map(OpsDocuments::sweepResult).toList());
                Output.json(out(), doc);
            } else {
                List<List<String>> rows = new ArrayList<>();
                for (SweepResult r : report.sweeps()) {
                    rows.add(List.of(r.name(), Long.toString(r.removed()), took(r.took()),
                            r.error() == null && r.skipped() != null ? errorCell("skipped: " + r.skipped()) : errorCell(r.error())));
                }
                Output.table(out(), List.of("SWEEP", "REMOVED", "TOOK", "ERROR"), rows);
                out().println("pass took " + took(report.took()) + ", " + report.sweeps().size() + " sweeps"
                        + (failed == 0 ? "" : ", " + failed + " failed"));
            }
            if (failed > 0) {
                if (!json()) {
                    spec.commandLine().getErr().println("error: " + failed + " of " + report.sweeps().size()
                            + " sweeps failed (the others ran; a failed sweep is retried at the next pass)");
                }
                return Main.FAILURE;
            }
            return Main.OK;
        }
    }

    @Command(name = "metrics", description = {"The newest metric snapshots of each stream, group and queue, as the "
            + "manager's passes took them (read from a small table, never by counting big ones). Fields that do not "
            + "apply to the kind are '-' (null in JSON); the rate is ids produced (streams) or committed (groups) per "
            + "second since the previous snapshot."})
    static final class Metrics extends Base {
        @Override
        public Integer call() {
            try (CliContext ctx = open()) {
                List<MetricSnapshot> snapshots = ctx.sluice().maintenance().metrics();
                if (json()) {
                    Output.json(out(), snapshots.stream().map(StreamDocuments::metric).toList());
                } else if (snapshots.isEmpty()) {
                    out().println("no metric snapshots in schema '" + globals().schema
                            + "' yet (each maintenance pass takes them; 'sluice maintenance run' takes one now)");
                } else {
                    List<List<String>> rows = new ArrayList<>();
                    for (MetricSnapshot s : snapshots) {
                        rows.add(List.of(s.kind(), s.name(), cell(s.head()), cell(s.committed()), cell(s.lag()), cell(s.backlog()),
                                cell(s.retrying()), cell(s.dead()), cell(s.pending()), cell(s.processing()),
                                s.ratePerSecond() == null ? "-" : String.format(java.util.Locale.ROOT, "%.1f", s.ratePerSecond()),
                                s.takenAt().toString()));
                    }
                    Output.table(out(), List.of("KIND", "NAME", "HEAD", "COMMITTED", "LAG", "BACKLOG", "RETRYING", "DEAD",
                            "PENDING", "PROCESSING", "RATE_PER_S", "TAKEN_AT"), rows);
                }
            }
            return Main.OK;
        }

        private static String cell(Long v) {
            return v == null ? "-" : Long.toString(v);
        }
    }
}
