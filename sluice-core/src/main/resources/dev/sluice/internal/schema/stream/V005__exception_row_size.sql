-- The payload size of each exception row's message, written with the row. The row claim's byte budget reads it
-- here: joining the log by the claimed ids instead cannot be pruned at plan time, so that claim planned, opened and
-- locked every log partition of the stream (docs/consume.md, "Log windows"). Rows written before this step take
-- the size of their message once, here.
ALTER TABLE {schema}.exception_queue_{id}
    ADD COLUMN payload_bytes integer NOT NULL DEFAULT 0 CHECK (payload_bytes >= 0);
UPDATE {schema}.exception_queue_{id} e SET payload_bytes = octet_length(m.payload)
    FROM {schema}.message_log_{id} m WHERE m.id = e.message_id;
