package dev.sluice.server.json;

import dev.sluice.InstanceInfo;
import dev.sluice.LockInfo;
import dev.sluice.MaintenanceStatus;
import dev.sluice.ScheduleFire;
import dev.sluice.ScheduleInfo;
import dev.sluice.ScheduleSpec;
import dev.sluice.SweepResult;
import dev.sluice.SweepStatus;
import dev.sluice.WorkerInfo;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/** The JSON documents of schedules, locks, the fleet and maintenance (one shape for the HTTP API and the CLI). */
public final class OpsDocuments {
    private OpsDocuments() {
    }

    /** A schedule (its payload's size, not the payload). */
    public static Map<String, Object> schedule(ScheduleInfo s) {
        Map<String, Object> m = new LinkedHashMap<>();
        ScheduleSpec spec = s.spec();
        m.put("name", s.name());
        m.put("expression", spec.expression());
        m.put("zone", spec.zone().getId());
        m.put("target_kind", spec.target().kind().name().toLowerCase(Locale.ROOT));
        m.put("target", spec.target().name());
        m.put("content_type", spec.contentType());
        m.put("payload_bytes", spec.payload().length);
        m.put("misfire", spec.misfire().skip() ? "skip" : "catch-up");
        m.put("catch_up_max", spec.misfire().maxFires());
        m.put("suspended", s.suspended());
        m.put("next_due_at", Texts.text(s.nextDueAt()));
        m.put("last_due_at", Texts.text(s.lastDueAt()));
        m.put("last_fired_at", Texts.text(s.lastFiredAt()));
        m.put("fires", s.fires());
        m.put("created_at", Texts.text(s.createdAt()));
        m.put("updated_at", Texts.text(s.updatedAt()));
        return m;
    }

    /** One fire of a schedule. */
    public static Map<String, Object> fire(ScheduleFire f) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("schedule", f.schedule());
        m.put("target", f.target().toString());
        m.put("due_at", Texts.text(f.dueAt()));
        m.put("key", f.key());
        m.put("id", f.id());
        m.put("duplicate", f.duplicate());
        return m;
    }

    /** A lock. */
    public static Map<String, Object> lock(LockInfo l) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", l.name());
        m.put("owner", l.owner());
        m.put("held", l.held());
        m.put("fencing_token", l.fencingToken());
        m.put("acquired_at", Texts.text(l.acquiredAt()));
        m.put("expires_at", Texts.text(l.expiresAt()));
        m.put("updated_at", Texts.text(l.updatedAt()));
        return m;
    }

    /** A worker of the fleet. */
    public static Map<String, Object> worker(WorkerInfo w) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("key", w.key());
        m.put("target", w.targetInstances());
        m.put("live", w.live());
        m.put("active", w.active());
        m.put("paused", w.paused());
        m.put("updated_at", Texts.text(w.updatedAt()));
        return m;
    }

    /** An instance of a worker. */
    public static Map<String, Object> instance(InstanceInfo i) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", i.id());
        m.put("worker", i.worker());
        m.put("holder", i.holder());
        m.put("state", i.state().name().toLowerCase(Locale.ROOT));
        m.put("failures", i.failures());
        m.put("created_at", Texts.text(i.createdAt()));
        m.put("renewed_at", Texts.text(i.renewedAt()));
        m.put("expires_at", Texts.text(i.expiresAt()));
        return m;
    }

    /** The manager's instance. */
    public static Map<String, Object> manager(InstanceInfo i) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("holder", i.holder());
        m.put("instance_id", i.id());
        m.put("since", Texts.text(i.createdAt()));
        m.put("renewed_at", Texts.text(i.renewedAt()));
        m.put("expires_at", Texts.text(i.expiresAt()));
        return m;
    }

    /** Who holds the manager (or null), whether maintenance is paused, and each sweep's last run. */
    public static Map<String, Object> maintenance(MaintenanceStatus s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("manager", s.manager().map(OpsDocuments::manager).orElse(null));
        m.put("paused", s.paused());
        m.put("sweeps", s.sweeps().stream().map(OpsDocuments::sweepStatus).toList());
        return m;
    }

    /** The last run of a maintenance sweep. */
    public static Map<String, Object> sweepStatus(SweepStatus s) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", s.name());
        m.put("last_run_at", Texts.text(s.lastRunAt()));
        m.put("removed", s.lastRemoved());
        m.put("took_ms", Texts.millis(s.lastTook()));
        m.put("error", s.lastError());
        m.put("run_by", s.runBy());
        m.put("runs", s.runs());
        m.put("failures", s.failures());
        return m;
    }

    /** What one sweep of a pass did. */
    public static Map<String, Object> sweepResult(SweepResult r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", r.name());
        m.put("removed", r.removed());
        m.put("took_ms", Texts.millis(r.took()));
        m.put("error", r.error());
        m.put("skipped", r.skipped());
        return m;
    }
}
