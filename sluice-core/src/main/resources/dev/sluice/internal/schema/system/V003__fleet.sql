-- Sluice control plane, version 3: the fleet at work and what the manager records. {schema} is replaced by
-- the quoted installation schema.

-- A worker without a declared target runs everywhere (-1); 0 pauses it, N caps its live instances.
ALTER TABLE {schema}.worker_config ALTER COLUMN target_instances SET DEFAULT -1;

-- The manager's cleanup of expired instances walks expiry alone; the heartbeat renews by token (unique).
CREATE INDEX worker_instance_expires_idx ON {schema}.worker_instance (expires_at);

-- The last run of each maintenance sweep, whoever ran it (the elected manager or an operator's run-once):
-- one row per sweep, overwritten, so `sluice maintenance status` reads a handful of rows.
CREATE TABLE {schema}.maintenance_sweep (
    name         text        PRIMARY KEY,
    started_at   timestamptz NOT NULL,
    finished_at  timestamptz NOT NULL,
    removed      bigint      NOT NULL CHECK (removed >= 0),
    duration_ns  bigint      NOT NULL CHECK (duration_ns >= 0),
    error        text,
    run_by       text        NOT NULL,
    runs         bigint      NOT NULL DEFAULT 1 CHECK (runs >= 1),
    failures     bigint      NOT NULL DEFAULT 0 CHECK (failures >= 0)
);

-- Figures per stream, group and queue taken by the manager, so operators and the HTTP API read them
-- without count(*) over big tables: one row per object (the newest snapshot), the rate computed from the
-- previous one. name: the stream, 'stream/group', or the queue.
CREATE TABLE {schema}.metric_snapshot (
    kind        text             NOT NULL CHECK (kind IN ('stream', 'group', 'queue')),
    name        text             NOT NULL,
    taken_at    timestamptz      NOT NULL,
    head        bigint,
    committed   bigint,
    lag         bigint,
    backlog     bigint,
    retrying    bigint,
    dead        bigint,
    pending     bigint,
    processing  bigint,
    rate_per_s  double precision,
    PRIMARY KEY (kind, name)
);
