-- How often a partitioned group's bucket was handed out from its current position without a commit
-- (docs/partitions.md, "Re-runs and quarantine"). Each fetch of a bucket's messages writes the next version of its
-- position with runs + 1 and run_high the highest id it handed out; the commit that moves the position past run_high
-- writes runs 0 again. A member that takes the bucket over after its owner died delivers the messages up to
-- run_high as attempt runs + 1, and quarantines them as exception rows once runs passes the group's
-- maxRangeReclaims — so a redelivery after a takeover is counted, as every other redelivery is.
ALTER TABLE {schema}.partition_cursor_{id}
    ADD COLUMN runs integer NOT NULL DEFAULT 0 CHECK (runs >= 0),
    ADD COLUMN run_high bigint;
