-- How often each message of a partitioned group's bucket above its position was handed out without a commit
-- (docs/partitions.md, "Re-runs and quarantine"). One count with one high mark (V006) could not say it once a
-- re-run went on in several batches: each later batch of the same re-run counted as another re-run. run_tops holds
-- the highest id of every hand-out run since the position (a run: a holder's batches, each continuing the last, from
-- where the position stood), highest first; a message was handed out as often as there are tops at or above its id.
-- A fetch that continues a run replaces that run's top, one that starts from the position again adds a top, and a
-- commit drops the tops at or below the new position. Existing marks carry over: runs tops of run_high each.
ALTER TABLE {schema}.partition_cursor_{id} ADD COLUMN run_tops bigint[] NOT NULL DEFAULT '{}';
UPDATE {schema}.partition_cursor_{id} SET run_tops = array_fill(run_high, ARRAY[runs])
    WHERE runs > 0 AND run_high IS NOT NULL AND run_high > position;
ALTER TABLE {schema}.partition_cursor_{id} DROP COLUMN runs, DROP COLUMN run_high;
