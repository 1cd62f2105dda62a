package dev.sluice.bench.lab;

/**
 * The lab's ledger (schema {@code sluice_lab}): every produce attempt and every handler call, written
 * by the producer and consumer processes, and the faults the orchestrator fired. A handler call is a
 * {@code start} and an {@code end} row with the same {@code call_id}, each stamped with the server's
 * {@code clock_timestamp()} inside the handler and the process's name, so the checker knows when each
 * delivery ran, and where. The checker
 * classifies every message against it.
 */
final class Ledger {
    static final String SCHEMA = "sluice_lab";
    /** The Sluice installation the lab exercises (separate from the ledger). */
    static final String SLUICE_SCHEMA = "sluice_lab_data";
    static final String STREAM = "lab.events";

    private Ledger() {
    }

    static String ddl() {
        return """
            DROP SCHEMA IF EXISTS sluice_lab CASCADE;
            DROP SCHEMA IF EXISTS sluice_lab_data CASCADE;
            CREATE SCHEMA sluice_lab;
            CREATE TABLE sluice_lab.produce_attempt (
                tag              text PRIMARY KEY,
                producer         text NOT NULL,
                message_key      text,
                routing_key      text,
                idempotency_key  text,
                compaction_rank  bigint,
                schema_version   integer NOT NULL,
                status           text NOT NULL CHECK (status IN ('attempt', 'committed', 'duplicate', 'rejected', 'unknown')),
                message_id       bigint,
                error            text,
                started_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
                finished_at      timestamptz
            );
            CREATE TABLE sluice_lab.handler_call (
                id          bigserial PRIMARY KEY,
                group_name  text NOT NULL,
                instance    text NOT NULL,
                -- the handler call: its start and end rows carry the same id (instance-unique)
                call_id     text NOT NULL,
                message_id  bigint NOT NULL,
                tag         text,
                attempt     integer NOT NULL,
                phase       text NOT NULL CHECK (phase IN ('start', 'end')),
                outcome     text,
                at          timestamptz NOT NULL DEFAULT clock_timestamp()
            );
            CREATE INDEX handler_call_message_idx ON sluice_lab.handler_call (group_name, message_id);
            CREATE INDEX handler_call_call_idx ON sluice_lab.handler_call (call_id);
            CREATE TABLE sluice_lab.fault (
                id      bigserial PRIMARY KEY,
                kind    text NOT NULL,
                detail  text,
                at      timestamptz NOT NULL DEFAULT clock_timestamp()
            );
            """;
    }
}
