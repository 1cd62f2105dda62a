-- Sluice control plane, version 4: shard leases of partitioned consumer groups. {schema} is replaced by the
-- quoted installation schema.
--
-- One row per (group, bucket) of a partitioned group, created with the group: who owns the bucket right now,
-- as a renewable lease. A bucket of a message is ((hashtextextended(message_key, 0) % shard_count) +
-- shard_count) % shard_count (keyless messages: id % shard_count), computed in SQL so every client agrees.
-- A live member (a fleet instance of the group's consumer worker) renews the buckets it owns on its
-- heartbeat; a member that stops renewing loses them when the lease expires, and another member claims them.
-- owner_token NULL means unowned (free to claim). The bucket's position is not here: it lives in the stream's
-- partition_cursor_<id>; this table only governs assignment.
CREATE TABLE {schema}.shard_lease (
    consumer_group_id  bigint      NOT NULL REFERENCES {schema}.consumer_group_config (id) ON DELETE CASCADE,
    bucket             integer     NOT NULL,
    shard_count        integer     NOT NULL,
    -- the owning member's lease token (only it knows it), NULL when unowned
    owner_token        uuid,
    -- the owner's fleet instance (worker_instance.id), for operators; no foreign key: the row may be gone
    owner_instance_id  bigint,
    lease_expires_at   timestamptz,
    -- the last renewal (observability)
    heartbeat_at       timestamptz,
    -- the last change of owner
    updated_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (consumer_group_id, bucket),
    CONSTRAINT shard_lease_bucket_range_chk CHECK (bucket >= 0 AND bucket < shard_count),
    CONSTRAINT shard_lease_count_chk CHECK (shard_count >= 1),
    CONSTRAINT shard_lease_owned_chk CHECK ((owner_token IS NULL) = (lease_expires_at IS NULL))
);
-- An owner's buckets (the renewal and the commit guard).
CREATE INDEX shard_lease_owner_idx ON {schema}.shard_lease (consumer_group_id, owner_token);
-- Unowned and expired buckets (the claim).
CREATE INDEX shard_lease_lease_idx ON {schema}.shard_lease (consumer_group_id, lease_expires_at);
