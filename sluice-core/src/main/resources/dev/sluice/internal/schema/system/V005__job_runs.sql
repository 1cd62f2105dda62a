-- Sluice control plane, version 5: job runs (results, an ordered event trail, completion waits,
-- dependencies and cancellation). {schema} is replaced by the quoted installation schema.
--
-- Every new column has a constant default, so adding it rewrites nothing. Only the widened state check
-- scans job once (while the step holds its lock); job is the live set, so that scan is short.

-- The per-job options and the bookkeeping of the run model, on the live row:
--   keep_runs_ns / keep_events_ns  stamped at enqueue (NULL: no run record, no event trail)
--   event_seq                      the job's last event sequence number (the next event is event_seq + 1)
--   first_claimed_at               when the first attempt started
--   awaited                        a completion waiter is present: the end notifies 'r:<id>' and keeps a record
--   cancel_requested               cancel was asked while the job ran: its next heartbeat or ack learns it
--   dependents                     children that registered on this job (job_dependency rows); > 0 makes its end
--                                  release or cancel them in the same transaction
--   parents_left                   parents of a waiting job that have not ended yet
--   on_parent_failure              'cancel' (the default) or 'run': what a parent's failure does to this job
ALTER TABLE {schema}.job
    ADD COLUMN keep_runs_ns       bigint  CHECK (keep_runs_ns IS NULL OR keep_runs_ns > 0),
    ADD COLUMN keep_events_ns     bigint  CHECK (keep_events_ns IS NULL OR keep_events_ns > 0),
    ADD COLUMN event_seq          integer NOT NULL DEFAULT 0,
    ADD COLUMN first_claimed_at   timestamptz,
    ADD COLUMN awaited            boolean NOT NULL DEFAULT false,
    ADD COLUMN cancel_requested   boolean NOT NULL DEFAULT false,
    ADD COLUMN dependents         integer NOT NULL DEFAULT 0 CHECK (dependents >= 0),
    ADD COLUMN parents_left       integer NOT NULL DEFAULT 0 CHECK (parents_left >= 0),
    ADD COLUMN on_parent_failure  text    NOT NULL DEFAULT 'cancel' CHECK (on_parent_failure IN ('cancel', 'run'));
-- A third live state: waiting for parents (never claimable: the claim index holds pending rows only).
ALTER TABLE {schema}.job DROP CONSTRAINT job_state_check;
ALTER TABLE {schema}.job ADD CONSTRAINT job_state_check CHECK (state IN ('pending', 'processing', 'waiting'));

-- A dead job keeps the run model's stamps, so a redrive continues its trail.
ALTER TABLE {schema}.job_dead
    ADD COLUMN keep_runs_ns       bigint,
    ADD COLUMN keep_events_ns     bigint,
    ADD COLUMN event_seq          integer NOT NULL DEFAULT 0,
    ADD COLUMN first_claimed_at   timestamptz;

-- Run records: one row per ended job (succeeded, discarded, dead, cancelled) of a queue that keeps runs, or
-- that a waiter awaited (then kept for a short grace). The payload is stored once, with the job while it is live
-- or dead (reads join it back from job_dead); a record keeps the result, not the input: moving every payload into
-- the record would double what a drain with records writes. A redrive deletes the record: the job is live again.
CREATE TABLE {schema}.job_run (
    id                   bigint      PRIMARY KEY,
    queue                text        NOT NULL,
    status               text        NOT NULL CHECK (status IN ('succeeded', 'discarded', 'dead', 'cancelled')),
    -- dead: failed, expired or claim_expired; cancelled: why (operator, parent); else NULL
    reason               text,
    attempts             integer     NOT NULL,
    max_attempts         integer     NOT NULL,
    priority             integer     NOT NULL,
    enqueued_at          timestamptz NOT NULL,
    first_started_at     timestamptz,
    finished_at          timestamptz NOT NULL DEFAULT now(),
    worker_id            text,
    content_type         text        NOT NULL,
    result               bytea,
    result_content_type  text,
    last_error           text,
    unique_key           text,
    headers              jsonb,
    event_seq            integer     NOT NULL,
    purge_after          timestamptz NOT NULL,
    CONSTRAINT job_run_result_typed CHECK ((result IS NULL) = (result_content_type IS NULL))
);
-- Operator reads: a queue's runs newest first, keyset-paged by (finished_at, id).
CREATE INDEX job_run_queue_idx ON {schema}.job_run (queue, finished_at, id);
-- The retention sweep: rows arrive roughly in purge order, so a BRIN index costs almost nothing to keep.
CREATE INDEX job_run_purge_idx ON {schema}.job_run USING brin (purge_after);

-- The event trail: append-only, one row per state change of a job that keeps runs, written in the same
-- statement as the change. (job_id, seq) orders a job's events; its retention is independent of the run's.
-- Never the payload or the result.
CREATE TABLE {schema}.job_event (
    job_id       bigint      NOT NULL,
    seq          integer     NOT NULL,
    queue        text        NOT NULL,
    type         text        NOT NULL CHECK (type IN ('enqueued', 'claimed', 'retried', 'rescued', 'succeeded',
                                                      'discarded', 'dead', 'revived', 'cancelled')),
    at           timestamptz NOT NULL DEFAULT now(),
    attempt      integer,
    worker_id    text,
    -- the error of a retry, the reason of a death or cancellation
    detail       text,
    -- when a retried or rescued job runs next
    next_due     timestamptz,
    purge_after  timestamptz NOT NULL,
    PRIMARY KEY (job_id, seq)
);
CREATE INDEX job_event_purge_idx ON {schema}.job_event USING brin (purge_after);

-- Dependencies: a child (job.state 'waiting') runs once every parent succeeded. Rows exist while both do;
-- a parent's end deletes its rows as it releases or cancels the children.
CREATE TABLE {schema}.job_dependency (
    parent_id  bigint NOT NULL,
    child_id   bigint NOT NULL,
    PRIMARY KEY (parent_id, child_id)
);
CREATE INDEX job_dependency_child_idx ON {schema}.job_dependency (child_id);
