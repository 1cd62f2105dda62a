-- The positions of partitioned groups (docs/partitions.md): per (group, bucket), every message of the bucket
-- at or below position is resolved — handled, or held by an exception row. Written only by the bucket's owner,
-- under its shard lease, in the transaction that records the outcomes. Append-only like the group cursor: a
-- commit writes version seq + 1 and deletes the one it replaces, and the current position is the newest row of
-- (group, bucket), found first by a backward scan of the primary key (docs/fence.md, "Under a held xmin").
CREATE TABLE {schema}.partition_cursor_{id} (
    consumer_group_id  bigint      NOT NULL,
    bucket             integer     NOT NULL CHECK (bucket >= 0),
    seq                bigint      NOT NULL,
    position           bigint      NOT NULL CHECK (position >= 0),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (consumer_group_id, bucket, seq)
);
