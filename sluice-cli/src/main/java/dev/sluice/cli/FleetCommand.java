package dev.sluice.cli;

import dev.sluice.ErrorCode;
import dev.sluice.InstanceInfo;
import dev.sluice.SluiceException;
import dev.sluice.WorkerInfo;
import dev.sluice.server.json.OpsDocuments;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code sluice fleet}: the schema's workers (what runs and how many copies may be active) and their live
 * instances; {@code set-target} pauses, resumes or caps a worker.
 */
@Command(name = "fleet", description = {"The worker fleet: workers with their target and live counts, their instances; "
        + "pause, resume or cap a worker.",
        "Worker keys: manager, schedules, queue:QUEUE, consumer:STREAM/GROUP."},
        subcommands = {FleetCommand.ListFleet.class, FleetCommand.SetTarget.class})
final class FleetCommand {

    private FleetCommand() {
    }

    /** A target as an operator reads it: {@code -1 (unlimited)}, {@code 0} (paused) or the cap. */
    static String target(int target) {
        return target < 0 ? target + " (unlimited)" : Integer.toString(target);
    }

    @Command(name = "list", description = {"Workers with their target (-1 unlimited, 0 paused, N at most N active), "
            + "live and active instance counts; with --instances also every instance row.",
            "An instance is active, standby (its worker already has its target of active ones), paused, or expired "
                    + "(its process stopped renewing; the manager deletes it)."})
    static final class ListFleet extends Base {
        @Option(names = "--instances", description = "Also list every instance: id, worker, holder, state, failures, "
                + "created, renewed, expires.")
        boolean instances;

        @Override
        public Integer call() {
            try (CliContext ctx = open()) {
                List<WorkerInfo> workers = ctx.sluice().fleet().workers();
                List<InstanceInfo> rows = instances ? ctx.sluice().fleet().instances() : List.of();
                if (json()) {
                    Map<String, Object> doc = new LinkedHashMap<>();
                    doc.put("workers", workers.stream().map(OpsDocuments::worker).toList());
                    if (instances) {
                        doc.put("instances", rows.stream().map(OpsDocuments::instance).toList());
                    }
                    Output.json(out(), doc);
                    return Main.OK;
                }
                if (workers.isEmpty()) {
                    out().println("no workers in schema '" + globals().schema + "'");
                } else {
                    List<List<String>> table = new ArrayList<>();
                    for (WorkerInfo w : workers) {
                        table.add(List.of(w.key(), target(w.targetInstances()), Integer.toString(w.live()),
                                Integer.toString(w.active()), w.paused() ? "yes" : "no"));
                    }
                    Output.table(out(), List.of("WORKER", "TARGET", "LIVE", "ACTIVE", "PAUSED"), table);
                }
                if (instances) {
                    out().println();
                    if (rows.isEmpty()) {
                        out().println("no instances");
                    } else {
                        List<List<String>> table = new ArrayList<>();
                        for (InstanceInfo i : rows) {
                            table.add(List.of(Long.toString(i.id()), i.worker(), i.holder(),
                                    i.state().name().toLowerCase(Locale.ROOT), Integer.toString(i.failures()),
                                    i.createdAt().toString(), i.renewedAt().toString(), i.expiresAt().toString()));
                        }
                        Output.table(out(), List.of("ID", "WORKER", "HOLDER", "STATE", "FAILURES", "CREATED_AT",
                                "RENEWED_AT", "EXPIRES_AT"), table);
                    }
                }
            }
            return Main.OK;
        }
    }

    @Command(name = "set-target", description = {"Set a worker's target instances and print the worker afterwards.",
            "-1 unlimited (the default), 0 paused (its parts stop claiming within one heartbeat and resume when the "
                    + "target changes), N at most N active (the others wait as standbys). The manager takes 1 or 0 "
                    + "(0 pauses maintenance). Every process of the schema is notified.",
            "Examples: sluice fleet set-target consumer:orders/billing 0   (pause)",
            "          sluice fleet set-target consumer:orders/billing -1  (resume)",
            "A malformed key or a target out of range is SLU-0015, a worker that does not exist (a group that is not "
                    + "registered) SLU-0119; both exit 1."})
    static final class SetTarget extends Base {
        @Parameters(index = "0", paramLabel = "WORKER",
                description = "The worker's key: manager, schedules, queue:QUEUE or consumer:STREAM/GROUP.")
        String key;

        @Parameters(index = "1", paramLabel = "N", description = "-1 unlimited, 0 paused, 1 to 10000 at most N active.")
        String target;

        @Override
        public Integer call() {
            int n = parseTarget(target);
            try (CliContext ctx = open()) {
                WorkerInfo w = ctx.sluice().fleet().setTarget(key, n);
                if (json()) {
                    Output.json(out(), OpsDocuments.worker(w));
                } else {
                    Map<String, Object> fields = new LinkedHashMap<>();
                    fields.put("worker", w.key());
                    fields.put("target", target(w.targetInstances()));
                    fields.put("live", w.live());
                    fields.put("active", w.active());
                    fields.put("paused", w.paused() ? "yes" : "no");
                    fields.put("updated_at", w.updatedAt());
                    Output.fields(out(), fields);
                }
            }
            return Main.OK;
        }

        /** A whole number (its range is the library's to check), else INVALID_ARGUMENT. */
        static int parseTarget(String s) {
            try {
                return Integer.parseInt(s.trim());
            } catch (NumberFormatException e) {
                throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "target '" + Terminal.echo(s)
                        + "' is not a whole number: use -1 (unlimited), 0 (paused) or 1 to 10000");
            }
        }
    }
}
