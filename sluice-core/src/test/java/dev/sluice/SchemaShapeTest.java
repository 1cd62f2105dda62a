package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.testing.PgCatalog;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Asserts the pinned table design of seed 000 from PostgreSQL's catalogs. */
@SluiceTest
class SchemaShapeTest {
    static PgCatalog cat;
    static long id;
    static String s;

    @BeforeAll
    static void install(TestDatabase db) {
        Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build();
        id = sluice.stream("shape.orders").register(StreamConfig.builder().partitionSize(1000).build()).id();
        cat = new PgCatalog(db, db.schema());
        s = db.schema();
    }

    private static String fk(String column, String table) {
        return "FOREIGN KEY (" + column + ") REFERENCES " + s + "." + table + "(id) ON DELETE CASCADE";
    }

    @Test
    void ownershipSpineIsRealCascadingForeignKeys() {
        assertThat(cat.constraints("stream_config", 'f')).containsExactly(fk("system_id", "system_config"));
        assertThat(cat.constraints("consumer_group_config", 'f')).containsExactly(fk("stream_id", "stream_config"));
        assertThat(cat.constraints("stream_config_log", 'f')).containsExactly(fk("stream_id", "stream_config"));
        assertThat(cat.constraints("schedule_cursor", 'f'))
                .containsExactly("FOREIGN KEY (schedule_id) REFERENCES " + s + ".schedule_config(id) ON DELETE CASCADE");
        assertThat(cat.constraints("worker_config_log", 'f')).containsExactly(fk("worker_config_id", "worker_config"));
        assertThat(cat.constraints("worker_instance", 'f')).containsExactly(fk("worker_config_id", "worker_config"));
        assertThat(cat.constraints("worker_instance_log", 'f')).containsExactly(fk("worker_config_id", "worker_config"));
        for (String owned : List.of("worker_config", "schedule_config", "migration_log")) {
            assertThat(cat.constraints(owned, 'f')).containsExactlyInAnyOrder(
                    fk("system_id", "system_config"), fk("stream_id", "stream_config"),
                    fk("consumer_group_id", "consumer_group_config"));
        }
    }

    @Test
    void exactlyOneOwnerChecks() {
        for (String owned : List.of("worker_config", "schedule_config", "migration_log")) {
            assertThat(cat.constraints(owned, 'c'))
                    .contains("CHECK ((num_nonnulls(system_id, stream_id, consumer_group_id) = 1))");
        }
    }

    @Test
    void uniqueNames() {
        assertThat(cat.constraints("system_config", 'u')).containsExactly("UNIQUE (name)");
        assertThat(cat.constraints("stream_config", 'u')).containsExactly("UNIQUE (name)");
        assertThat(cat.constraints("schedule_config", 'u')).containsExactly("UNIQUE (name)");
        assertThat(cat.constraints("consumer_group_config", 'u')).containsExactly("UNIQUE (stream_id, name)");
        assertThat(cat.constraints("worker_config", 'u'))
                .containsExactly("UNIQUE NULLS NOT DISTINCT (system_id, stream_id, consumer_group_id, name)");
        assertThat(cat.constraints("migration_log", 'u'))
                .containsExactly("UNIQUE NULLS NOT DISTINCT (system_id, stream_id, consumer_group_id, version)");
    }

    @Test
    void streamConfigHasTheSeedColumns() {
        Map<String, String> cols = cat.columns("stream_config");
        assertThat(cols).containsEntry("id", "bigint not null")
                .containsEntry("system_id", "bigint not null")
                .containsEntry("name", "text not null")
                .containsEntry("partition_size", "bigint not null")
                .containsEntry("retention_ttl_ns", "bigint")
                .containsEntry("allow_drop_past_committed", "boolean not null")
                .containsEntry("idempotency_key_ttl_ns", "bigint not null")
                .containsEntry("empty_compaction_head_ttl_ns", "bigint not null")
                .containsEntry("delivery_log_mode", "text not null")
                .containsEntry("config", "jsonb not null");
        assertThat(cat.columns("schedule_cursor")).containsKeys("schedule_id", "next_scheduled_at", "last_scheduled_at");
        assertThat(cat.columns("worker_instance")).containsKeys("token", "expires_at", "failures", "created_at");
        assertThat(cat.columns("worker_instance_log")).containsKeys("instance_id", "token", "instance_created_at", "expires_at", "failures");
        assertThat(cat.columns("worker_config")).containsKeys("target_instances", "metadata", "poll_rate_ns");
        assertThat(cat.columns("migration_log")).containsKeys("scope", "version", "step", "checksum", "applied_at");
    }

    @Test
    void familyHasEveryTableAndNoStreamIdColumn() {
        List<String> family = List.of("message_log", "idempotency_key", "compaction_head", "exception_queue",
                "delivery_log", "consumer_group_cursor", "claim_lease", "message_key_lease", "binding_config",
                "binding_config_log");
        for (String t : family) {
            String table = t + "_" + id;
            assertThat(cat.columns(table)).as(table).isNotEmpty().doesNotContainKey("stream_id");
        }
    }

    @Test
    void messageLogIsRangePartitionedByIdWithFirstPartitions() {
        String log = "message_log_" + id;
        assertThat(cat.partitionKey(log)).isEqualTo("RANGE (id)");
        // Partition 0 holds the head (id 0); ahead: one partition, and at least 1024 ids.
        assertThat(cat.partitions(log)).containsExactly(
                log + "_0 FOR VALUES FROM ('0') TO ('1000')",
                log + "_1 FOR VALUES FROM ('1000') TO ('2000')",
                log + "_2 FOR VALUES FROM ('2000') TO ('3000')");
        assertThat(cat.columns(log)).containsEntry("id", "bigint not null")
                .containsEntry("payload", "bytea not null")
                .containsEntry("headers", "jsonb")
                .containsEntry("schema_version", "integer not null")
                .containsKeys("routing_key", "message_key", "compaction_rank", "options", "created_at", "content_type");
        assertThat(cat.constraints(log, 'p')).containsExactly("PRIMARY KEY (id)");
    }

    @Test
    void compactionHeadAllOrNoneCheckAndPartialIndex() {
        String t = "compaction_head_" + id;
        assertThat(cat.constraints(t, 'p')).containsExactly("PRIMARY KEY (compaction_key)");
        assertThat(cat.constraints(t, 'c')).singleElement().asString()
                .contains("message_id IS NULL").contains("schema_version IS NULL").contains("rank IS NULL")
                .contains("message_id IS NOT NULL").contains("schema_version IS NOT NULL").contains("rank IS NOT NULL");
        assertThat(cat.indexes(t)).anySatisfy(ix -> assertThat(ix)
                .contains("(updated_at, compaction_key) WHERE (message_id IS NULL)"));
    }

    @Test
    void exceptionQueueKeysAndIndexes() {
        String t = "exception_queue_" + id;
        assertThat(cat.constraints(t, 'p')).containsExactly("PRIMARY KEY (consumer_group_id, message_id)");
        assertThat(cat.indexes(t)).anySatisfy(ix -> assertThat(ix).endsWith("(consumer_group_id, message_key, message_id)"));
        assertThat(cat.columns(t)).containsKeys("status", "message_key", "concurrency", "attempts", "delays",
                "can_run_after", "last_error", "lease_owner", "lease_expires_at");
        assertThat(cat.constraints(t, 'f')).isEmpty();
    }

    @Test
    void cursorIsVersionedPerGroupWithFenceColumnsAndTheOnlyFks() {
        String cursor = "consumer_group_cursor_" + id;
        assertThat(cat.constraints(cursor, 'p')).containsExactly("PRIMARY KEY (consumer_group_id, seq)");
        assertThat(cat.constraints(cursor, 'u')).isEmpty();
        assertThat(cat.columns(cursor)).containsEntry("seq", "bigint not null")
                .containsEntry("claimed", "bigint not null")
                .containsEntry("committed", "bigint not null")
                .containsEntry("settled_head", "bigint not null")
                .containsEntry("pending_head", "bigint")
                .containsEntry("pending_xids", "xid8[]");
        // No foreign key: its check would lock the group's control-plane row on every claim.
        assertThat(cat.constraints(cursor, 'f')).isEmpty();
        // Lease lookups scan (group, low) upward from committed; no index leads them through completed leases.
        assertThat(cat.indexes("claim_lease_" + id)).noneSatisfy(ix -> assertThat(ix).contains("expires_at"));
        String groupFk = "FOREIGN KEY (consumer_group_id) REFERENCES " + s + ".consumer_group_config(id) ON DELETE CASCADE";
        assertThat(cat.constraints("binding_config_" + id, 'f')).containsExactly(groupFk);
        assertThat(cat.constraints("binding_config_log_" + id, 'f')).containsExactly(groupFk);
        for (String unconstrained : List.of("message_log", "idempotency_key", "compaction_head", "exception_queue",
                "delivery_log", "claim_lease", "message_key_lease")) {
            assertThat(cat.constraints(unconstrained + "_" + id, 'f')).as(unconstrained).isEmpty();
        }
    }

    @Test
    void leaseTables() {
        assertThat(cat.constraints("message_key_lease_" + id, 'p')).containsExactly("PRIMARY KEY (consumer_group_id, message_key)");
        assertThat(cat.columns("claim_lease_" + id)).containsKeys("low", "high", "expires_at", "reclaims", "owner_token");
        assertThat(cat.columns("idempotency_key_" + id)).containsEntry("key", "uuid not null");
        assertThat(cat.constraints("idempotency_key_" + id, 'p')).containsExactly("PRIMARY KEY (key)");
        assertThat(cat.columns("binding_config_" + id)).containsKeys("pattern", "pattern_regex");
    }

    @Test
    void shardLeaseRowsPerBucketOwnedByTheGroup() {
        assertThat(cat.constraints("shard_lease", 'p')).containsExactly("PRIMARY KEY (consumer_group_id, bucket)");
        assertThat(cat.constraints("shard_lease", 'f')).containsExactly(
                "FOREIGN KEY (consumer_group_id) REFERENCES " + s + ".consumer_group_config(id) ON DELETE CASCADE");
        assertThat(cat.columns("shard_lease")).containsEntry("bucket", "integer not null")
                .containsEntry("shard_count", "integer not null")
                .containsEntry("owner_token", "uuid")
                .containsKeys("owner_instance_id", "lease_expires_at", "heartbeat_at", "updated_at");
        // The renewal and the commit guard find an owner's rows; the claim finds unowned and expired ones.
        assertThat(cat.indexes("shard_lease")).anySatisfy(ix -> assertThat(ix).contains("shard_lease_owner_idx")
                .endsWith("(consumer_group_id, owner_token)"));
        assertThat(cat.indexes("shard_lease")).anySatisfy(ix -> assertThat(ix).contains("shard_lease_lease_idx")
                .endsWith("(consumer_group_id, lease_expires_at)"));
    }
}
