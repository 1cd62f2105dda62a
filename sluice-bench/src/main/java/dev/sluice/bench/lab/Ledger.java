package dev.sluice.bench.lab;

/**
 * The lab's ledger (schema {@code sluice_lab}): every produce attempt and its result, every handler call, written by
 * the producer and consumer processes through their {@link LedgerWriter} (batched {@code COPY}), and the faults the
 * orchestrator fired. The tables have no keys and no indexes while the run writes them (a row may even be written
 * twice, when a commit reply was lost: the checker counts by identity, never rows); {@link #checkIndexes()} adds what
 * the checker needs once the run is over.
 *
 * <p>A handler call is identified by {@code (instance, call_no)}: a {@code start} row (ended_at null) queued when the
 * handler starts, without waiting, and an end row (both instants and the outcome) that is durable before the handler
 * returns. The start row is dropped when the end row came before it was flushed — the end row carries the start — so
 * a start row without an end row is a call that was cut off (its process killed) or still ran when the run stopped.
 * Instants are the writing process's clock ({@code Instant.now()}); every process runs on one host.
 */
final class Ledger {
    static final String SCHEMA = "sluice_lab";
    /** The Sluice installation the lab exercises (separate from the ledger). */
    static final String SLUICE_SCHEMA = "sluice_lab_data";
    static final String STREAM = "lab.events";

    /** One row per produce attempt, queued before the produce (its {@code tag} is in the payload). */
    static final LedgerWriter.Table PRODUCE_ATTEMPT = LedgerWriter.table("produce_attempt", "tag", "producer",
            "message_key", "routing_key", "idempotency_key", "compaction_rank", "schema_version", "at");
    /** One row per produce whose outcome the producer learnt: committed, duplicate, rejected or unknown. */
    static final LedgerWriter.Table PRODUCE_RESULT = LedgerWriter.table("produce_result", "tag", "status", "message_id",
            "error", "at");
    /** A handler call's start (ended_at and outcome null) or end row. */
    static final LedgerWriter.Table HANDLER_CALL = LedgerWriter.table("handler_call", "group_name", "instance", "call_no",
            "message_id", "tag", "attempt", "started_at", "ended_at", "outcome");
    /**
     * The instant a consumer process's stream groups were running (durable before it handles anything): from then
     * until its kill it could take over what a killed consumer held.
     */
    static final LedgerWriter.Table CONSUMER_READY = LedgerWriter.table("consumer_ready", "instance", "at");

    private Ledger() {
    }

    static String ddl() {
        return """
            DROP SCHEMA IF EXISTS sluice_lab CASCADE;
            DROP SCHEMA IF EXISTS sluice_lab_data CASCADE;
            CREATE SCHEMA sluice_lab;
            CREATE TABLE sluice_lab.produce_attempt (
                tag              text NOT NULL,
                producer         text NOT NULL,
                message_key      text,
                routing_key      text,
                idempotency_key  text,
                compaction_rank  bigint,
                schema_version   integer NOT NULL,
                at               timestamptz NOT NULL
            );
            CREATE TABLE sluice_lab.produce_result (
                tag         text NOT NULL,
                status      text NOT NULL CHECK (status IN ('committed', 'duplicate', 'rejected', 'unknown')),
                message_id  bigint,
                error       text,
                at          timestamptz NOT NULL
            );
            CREATE TABLE sluice_lab.handler_call (
                group_name  text NOT NULL,
                instance    text NOT NULL,
                call_no     bigint NOT NULL,
                message_id  bigint NOT NULL,
                tag         text,
                attempt     integer NOT NULL,
                started_at  timestamptz NOT NULL,
                ended_at    timestamptz,
                outcome     text CHECK (outcome IN ('success', 'failed', 'terminal'))
            );
            CREATE TABLE sluice_lab.consumer_ready (
                instance  text NOT NULL,
                at        timestamptz NOT NULL
            );
            CREATE TABLE sluice_lab.fault (
                id      bigserial PRIMARY KEY,
                kind    text NOT NULL,
                detail  text,
                at      timestamptz NOT NULL DEFAULT clock_timestamp()
            );
            """;
    }

    /**
     * The checker's working tables, rebuilt on each check: {@code calls} (one row per handler call, from its start
     * and end rows) and {@code results} (one row per produce outcome), both analysed.
     */
    static String checkTables() {
        return """
            DROP TABLE IF EXISTS sluice_lab.calls;
            CREATE UNLOGGED TABLE sluice_lab.calls AS
                SELECT group_name, instance, call_no, min(message_id) AS message_id, min(tag) AS tag, min(attempt) AS attempt,
                       min(started_at) AS started_at, max(ended_at) AS ended_at, max(outcome) AS outcome
                FROM sluice_lab.handler_call GROUP BY group_name, instance, call_no;
            CREATE INDEX ON sluice_lab.calls (group_name, message_id);
            DROP TABLE IF EXISTS sluice_lab.results;
            CREATE UNLOGGED TABLE sluice_lab.results AS SELECT DISTINCT ON (tag) tag, status, message_id
                FROM sluice_lab.produce_result ORDER BY tag, status;
            DROP TABLE IF EXISTS sluice_lab.attempts;
            CREATE UNLOGGED TABLE sluice_lab.attempts AS SELECT DISTINCT ON (tag) * FROM sluice_lab.produce_attempt ORDER BY tag;
            ANALYZE sluice_lab.calls;
            ANALYZE sluice_lab.results;
            ANALYZE sluice_lab.attempts;
            """;
    }
}
