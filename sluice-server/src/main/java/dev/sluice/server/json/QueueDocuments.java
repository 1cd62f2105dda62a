package dev.sluice.server.json;

import dev.sluice.DeadJob;
import dev.sluice.JobHandle;
import dev.sluice.JobInfo;
import dev.sluice.JobRun;
import dev.sluice.QueueInfo;
import dev.sluice.RunEvent;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;

/** The JSON documents of queues, jobs, dead jobs and runs (one shape for the HTTP API and the CLI). */
public final class QueueDocuments {
    private QueueDocuments() {
    }

    /** A queue with its counts by state. */
    public static Map<String, Object> queue(QueueInfo q) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", q.name());
        m.put("pending", q.pending());
        m.put("scheduled", q.scheduled());
        m.put("processing", q.processing());
        m.put("dead", q.dead());
        m.put("waiting", q.waiting());
        return m;
    }

    /** A live job (no payload: its size only). */
    public static Map<String, Object> job(JobInfo j) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", j.id());
        m.put("queue", j.queue());
        m.put("state", j.state().dbValue());
        m.put("priority", j.priority());
        m.put("run_at", Texts.text(j.runAt()));
        m.put("expires_at", Texts.text(j.expiresAt()));
        m.put("attempts", j.attempts());
        m.put("max_attempts", j.maxAttempts());
        m.put("visibility_timeout", j.visibilityTimeout().toString());
        m.put("backoff_base", j.backoffBase().toString());
        m.put("max_backoff", j.maxBackoff().toString());
        m.put("dead_letter_retention", j.deadLetterRetention().toString());
        m.put("worker_id", j.workerId());
        m.put("claimed_at", Texts.text(j.claimedAt()));
        m.put("claim_expires_at", Texts.text(j.claimExpiresAt()));
        m.put("last_error", j.lastError());
        m.put("unique_key", j.uniqueKey());
        m.put("headers", j.headers());
        m.put("content_type", j.contentType());
        m.put("payload_bytes", j.payloadBytes());
        m.put("created_at", Texts.text(j.createdAt()));
        m.put("updated_at", Texts.text(j.updatedAt()));
        return m;
    }

    /** A claimed job as a worker over HTTP receives it: with its payload and its claim token. */
    public static Map<String, Object> claimed(JobHandle<byte[]> h) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", h.id());
        m.put("queue", h.queue());
        m.put("claim_token", h.claimToken());
        m.put("attempt", h.attempt());
        m.put("max_attempts", h.maxAttempts());
        m.put("priority", h.priority());
        m.put("unique_key", h.uniqueKey());
        m.put("headers", h.headers());
        m.put("content_type", h.contentType());
        m.put("created_at", Texts.text(h.createdAt()));
        m.put("claim_expires_at", Texts.text(h.claimExpiresAt()));
        StreamDocuments.payload(m, h.payloadBytes());
        return m;
    }

    /** A dead job. */
    public static Map<String, Object> dead(DeadJob d) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", d.id());
        m.put("queue", d.queue());
        m.put("reason", d.reason().dbValue());
        m.put("last_error", d.lastError());
        m.put("attempts", d.attempts());
        m.put("max_attempts", d.maxAttempts());
        m.put("priority", d.priority());
        m.put("unique_key", d.uniqueKey());
        m.put("headers", d.headers());
        m.put("worker_id", d.workerId());
        m.put("payload_bytes", d.payloadBytes());
        m.put("created_at", Texts.text(d.createdAt()));
        m.put("died_at", Texts.text(d.diedAt()));
        m.put("purge_after", Texts.text(d.purgeAfter()));
        return m;
    }

    /** A run record; {@code result_base64} always, {@code result_text} too when the result is printable. */
    public static Map<String, Object> run(JobRun r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", r.id());
        m.put("queue", r.queue());
        m.put("status", r.status().dbValue());
        m.put("reason", r.reason());
        m.put("attempts", r.attempts());
        m.put("max_attempts", r.maxAttempts());
        m.put("priority", r.priority());
        m.put("enqueued_at", Texts.text(r.enqueuedAt()));
        m.put("first_started_at", Texts.text(r.firstStartedAt()));
        m.put("finished_at", Texts.text(r.finishedAt()));
        m.put("duration_ms", Texts.millis(runDuration(r)));
        m.put("worker_id", r.workerId());
        m.put("last_error", r.lastError());
        m.put("unique_key", r.uniqueKey());
        m.put("headers", r.headers());
        m.put("content_type", r.contentType());
        byte[] payload = r.payload();
        m.put("payload_bytes", payload == null ? null : payload.length);
        byte[] result = r.result();
        m.put("result_content_type", r.resultContentType());
        m.put("result_base64", result == null ? null : Base64.getEncoder().encodeToString(result));
        String text = Texts.printable(result);
        if (text != null) {
            m.put("result_text", text);
        }
        m.put("kept_until", Texts.text(r.keptUntil()));
        return m;
    }

    /** How long a run took from its first start to its end, or null. */
    public static Duration runDuration(JobRun r) {
        return r.firstStartedAt() == null || r.finishedAt() == null ? null : Duration.between(r.firstStartedAt(), r.finishedAt());
    }

    /** One event of a job's trail. */
    public static Map<String, Object> event(RunEvent e) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("seq", e.seq());
        m.put("type", e.type().dbValue());
        m.put("at", Texts.text(e.at()));
        m.put("attempt", e.attempt());
        m.put("worker_id", e.workerId());
        m.put("detail", e.detail());
        m.put("next_due", Texts.text(e.nextDue()));
        return m;
    }
}
