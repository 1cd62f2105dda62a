-- The fence keeps the transactions that can still commit below a pending observation (its holders),
-- instead of one transaction id whose elders all had to end (docs/fence.md). A pending observation made
-- under the old rule is dropped: the next claim observes the head again (settled_head is kept), which
-- never skips anything.
ALTER TABLE {schema}.consumer_group_cursor_{id} DROP CONSTRAINT consumer_group_cursor_{id}_pending;
ALTER TABLE {schema}.consumer_group_cursor_{id} DROP COLUMN pending_xid;
UPDATE {schema}.consumer_group_cursor_{id} SET pending_head = NULL;
ALTER TABLE {schema}.consumer_group_cursor_{id} ADD COLUMN pending_xids xid8[];
ALTER TABLE {schema}.consumer_group_cursor_{id} ADD CONSTRAINT consumer_group_cursor_{id}_pending
    CHECK ((pending_head IS NULL) = (pending_xids IS NULL));
