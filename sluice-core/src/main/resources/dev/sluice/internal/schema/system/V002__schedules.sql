-- Sluice control plane, version 2: what a schedule fires into, in which zone, and what it does after
-- downtime. A stream target is owned by its stream (stream_id; destroying the stream destroys the
-- schedule); a queue target is owned by the system row and names the queue (queues are rows, not
-- registered objects). {schema} is replaced by the quoted installation schema.
ALTER TABLE {schema}.schedule_config
    ADD COLUMN target_kind   text    NOT NULL DEFAULT 'stream' CHECK (target_kind IN ('stream', 'queue')),
    ADD COLUMN target_queue  text,
    ADD COLUMN zone          text    NOT NULL DEFAULT 'UTC',
    ADD COLUMN misfire       text    NOT NULL DEFAULT 'skip' CHECK (misfire IN ('skip', 'catch_up')),
    ADD COLUMN catch_up_max  integer NOT NULL DEFAULT 1 CHECK (catch_up_max BETWEEN 1 AND 1000),
    ADD CONSTRAINT schedule_config_target CHECK (
        (target_kind = 'stream' AND stream_id IS NOT NULL AND target_queue IS NULL)
        OR (target_kind = 'queue' AND system_id IS NOT NULL AND target_queue IS NOT NULL));

-- How often a schedule fired (due times and run-now fires) and when it last did, for operators.
ALTER TABLE {schema}.schedule_cursor
    ADD COLUMN fires          bigint NOT NULL DEFAULT 0 CHECK (fires >= 0),
    ADD COLUMN last_fired_at  timestamptz;

-- The runners look for the earliest due cursor.
CREATE INDEX schedule_cursor_next_idx ON {schema}.schedule_cursor (next_scheduled_at)
    WHERE next_scheduled_at IS NOT NULL;
CREATE INDEX schedule_config_stream_id_idx ON {schema}.schedule_config (stream_id) WHERE stream_id IS NOT NULL;
