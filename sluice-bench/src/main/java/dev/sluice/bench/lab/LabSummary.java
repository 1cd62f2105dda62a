package dev.sluice.bench.lab;

import java.util.LinkedHashMap;
import java.util.Map;

/** A lab run's JSON summary line (scenario {@code lab}; see docs/reliability-lab.md for every field). */
final class LabSummary {
    private LabSummary() {
    }

    static Map<String, Object> of(Lab.Result r, LabOptions o) {
        LabChecker.Check check = r.check();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("scenario", "lab");
        m.put("ours", check == null ? null : check.produced());
        m.put("reference", null);
        m.put("ratio", null);
        m.put("unit", "messages");
        m.put("postgres_version", null);
        m.put("cores", Runtime.getRuntime().availableProcessors());
        m.put("duration_s", o.duration().toSeconds());
        m.put("verdict", r.verdict());
        // The rate the producers held: messages checked per second of the run (asked: rate × producers).
        m.put("rate_asked", o.rate() * o.producers());
        m.put("rate_held", check == null ? null
                : Math.round(check.produced() * 10.0 / Math.max(1, o.duration().toSeconds())) / 10.0);
        // Where the CPU went while the faults fired, in cores (LabCpu): the server, consumers in their first 30 s and
        // after, producers, the orchestrator, and the total — a rate not held on a full machine shows it here.
        m.put("cpu_cores", r.cpuCores());
        m.put("class_archive", r.classArchive());
        m.put("lost", check == null ? null : check.lost());
        m.put("unexpected", check == null ? null : check.unexpected());
        m.put("unbucketed", check == null ? null : check.unbucketed());
        m.put("committed_missing", check == null ? null : check.committedMissing());
        m.put("duplicates", check == null ? null : check.duplicates());
        m.put("order_violations", check == null ? null : check.orderViolations());
        m.put("order_violations_by_group", check == null ? null : check.orderViolationsByGroup());
        // The partitioned group: calls of a key that ran in two processes at once (must be 0).
        m.put("key_overlaps", check == null ? null : check.keyOverlaps());
        m.put("uncounted_redeliveries", check == null ? null : check.uncountedRedeliveries());
        if (check != null && check.keyOverlapExample() != null) {
            m.put("key_overlap_example", check.keyOverlapExample());
        }
        // Retention is on: checked messages whose log partition the janitor dropped, and how many partitions went.
        m.put("retention_dropped", check == null ? null : check.retentionDropped());
        m.put("partitions_dropped", r.partitionsDropped());
        m.put("faults_fired", r.faultsFired());
        // Worker processes that ended on their own (a consumer is replaced at once), by name with the exit code.
        m.put("worker_exits", r.workerExits());
        double[] perKill = r.redeliverySeconds().values().stream().filter(v -> v != null).mapToDouble(Double::doubleValue)
                .sorted().toArray();
        m.put("redelivery_max_s", perKill.length == 0 ? null : perKill[perKill.length - 1]);
        m.put("redelivery_kills", perKill.length);
        m.put("redelivery_p50_s", perKill.length == 0 ? null : perKill[perKill.length / 2]);
        m.put("redelivery_bound_s", Lab.redeliveryBoundSeconds(o));
        // The figures above count the wait while another consumer process ran its groups (the bound applies to that);
        // from the kill itself, the worst was this, and this many kills left no other consumer running.
        m.put("redelivery_from_kill_max_s", r.redeliveryFromKillSeconds().values().stream().filter(v -> v != null)
                .max(Double::compare).orElse(null));
        m.put("kills_leaving_no_consumer", r.killsLeavingNoConsumer());
        // Nor do they count the wait while another message of the key ran in a group that runs one at a time; the most
        // any redelivery waited that way (null: none did).
        m.put("redelivery_key_held_max_s", r.redeliveryKeyHeldMaxSeconds());
        // From a kill until none of the process's fleet instances is live and another process holds the manager.
        Map<String, Double> takeovers = r.instanceTakeoverSeconds();
        m.put("instance_takeovers", takeovers.size());
        // null when there was no kill, or a kill's instances were not taken over at all (counted as late)
        boolean never = takeovers.values().stream().anyMatch(v -> v < 0);
        m.put("instance_takeover_max_s", takeovers.isEmpty() || never ? null
                : Math.round(takeovers.values().stream().mapToDouble(Double::doubleValue).max().orElse(0) * 100) / 100.0);
        m.put("instance_takeovers_late", takeovers.values().stream()
                .filter(v -> v < 0 || v > Lab.redeliveryBoundSeconds(o)).count());
        // Passes of the elected manager (whichever process held it) recorded in the run, janitor sweeps included.
        m.put("maintenance_passes", r.maintenancePasses());
        m.put("drain_s", r.drainSeconds());
        m.put("check_s", r.checkSeconds());
        m.put("buckets", check == null ? null : check.buckets());
        m.put("reason", r.reason());
        // What loaded the server, per statement, most first (pg_stat_statements on the embedded server).
        m.put("server_statements", r.serverStatements());
        // One section per engine: the stream's (the figures above, in brief), then each other engine's checker's.
        if (check != null) {
            Map<String, Object> streams = new LinkedHashMap<>();
            streams.put("messages", check.produced());
            streams.put("lost", check.lost());
            streams.put("unexpected", check.unexpected());
            streams.put("duplicates", check.duplicates());
            streams.put("order_violations", check.orderViolations());
            streams.put("key_overlaps", check.keyOverlaps());
            streams.put("uncounted_redeliveries", check.uncountedRedeliveries());
            streams.put("retention_dropped", check.retentionDropped());
            streams.put("failure", Lab.failure(check));
            m.put(LabEngines.STREAMS, streams);
        }
        r.sections().forEach((name, section) -> {
            Map<String, Object> figures = new LinkedHashMap<>(section.counts());
            figures.put("failure", section.failure());
            m.put(name, figures);
        });
        return m;
    }
}
