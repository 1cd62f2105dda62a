-- A group's cursor becomes append-only: every change writes the next version (seq + 1) and deletes the
-- one it replaces, and the current cursor is the group's newest row, found first by a backward scan of
-- the primary key. An UPDATE-in-place cursor keeps every version while any transaction of the server
-- holds back the xmin horizon, and each lookup then walks all of them; a newest-first read never visits
-- an old version (docs/fence.md, "Under a held xmin"). Claims serialise on a transaction-scoped
-- advisory lock instead of the row lock. The foreign key goes: its check would lock the group's
-- control-plane row on every claim (groups leave only with their stream, which drops the family).
ALTER TABLE {schema}.consumer_group_cursor_{id} DROP CONSTRAINT consumer_group_cursor_{id}_consumer_group_id_fkey;
ALTER TABLE {schema}.consumer_group_cursor_{id} DROP CONSTRAINT consumer_group_cursor_{id}_consumer_group_id_key;
ALTER TABLE {schema}.consumer_group_cursor_{id} ADD COLUMN seq bigint NOT NULL DEFAULT 1;
ALTER TABLE {schema}.consumer_group_cursor_{id} ALTER COLUMN seq DROP DEFAULT;
ALTER TABLE {schema}.consumer_group_cursor_{id} ADD CONSTRAINT consumer_group_cursor_{id}_pkey PRIMARY KEY (consumer_group_id, seq);
-- Every live lease lies above its group's committed cursor; lookups scan (group, low) from there, so they
-- never walk the leases completed before it. The expiry index led scans through all of them.
DROP INDEX {schema}.claim_lease_{id}_expires_idx;
