package dev.sluice.queue;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.testing.PgCatalog;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Asserts the pinned design of the queue and lock tables (seed 001) from PostgreSQL's catalogs. */
@SluiceTest
class QueueSchemaShapeTest {
    static PgCatalog cat;
    static String schema;

    @BeforeAll
    static void install(TestDatabase db) {
        schema = db.schema();
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            sluice.system().register();
        }
        cat = new PgCatalog(db, db.schema());
    }

    @Test
    void jobHasThePayloadTheStampedOptionsAndTheClaimColumns() {
        Map<String, String> cols = cat.columns("job");
        assertThat(cols).containsEntry("id", "bigint not null")
                .containsEntry("queue", "text not null")
                .containsEntry("payload", "bytea not null")
                .containsEntry("content_type", "text not null")
                .containsEntry("headers", "jsonb")
                .containsEntry("priority", "integer not null")
                .containsEntry("run_at", "timestamp with time zone not null")
                .containsEntry("expires_at", "timestamp with time zone")
                .containsEntry("visibility_timeout_ns", "bigint not null")
                .containsEntry("max_attempts", "integer not null")
                .containsEntry("backoff_base_ns", "bigint not null")
                .containsEntry("backoff_max_ns", "bigint not null")
                .containsEntry("dead_letter_retention_ns", "bigint not null")
                .containsEntry("attempts", "integer not null")
                .containsEntry("state", "text not null")
                .containsEntry("worker_id", "text")
                .containsEntry("claimed_at", "timestamp with time zone")
                .containsEntry("claim_expires_at", "timestamp with time zone")
                .containsEntry("claim_token", "uuid")
                .containsEntry("last_error", "text")
                .containsEntry("unique_key", "text")
                .containsEntry("keep_runs_ns", "bigint")
                .containsEntry("keep_events_ns", "bigint")
                .containsEntry("event_seq", "integer not null")
                .containsEntry("awaited", "boolean not null")
                .containsEntry("cancel_requested", "boolean not null")
                .containsEntry("dependents", "integer not null")
                .containsEntry("parents_left", "integer not null")
                .containsEntry("on_parent_failure", "text not null")
                .containsKeys("created_at", "updated_at", "first_claimed_at");
        assertThat(cat.constraints("job", 'p')).containsExactly("PRIMARY KEY (id)");
        assertThat(cat.constraints("job", 'c'))
                .contains("CHECK ((state = ANY (ARRAY['pending'::text, 'processing'::text, 'waiting'::text])))")
                .anySatisfy(c -> assertThat(c).contains("state = 'processing'").contains("claim_token IS NOT NULL"));
        // Queues are rows: no registry, no foreign key.
        assertThat(cat.constraints("job", 'f')).isEmpty();
        // The enqueue statement draws ids from this sequence by name.
        assertThat(cat.strings("SELECT pg_get_serial_sequence(?, 'id')", "\"" + schema + "\".job"))
                .singleElement().asString().endsWith(".job_id_seq");
    }

    @Test
    void jobIndexesServeClaimUniqueKeysRescueAndExpiry() {
        assertThat(cat.indexes("job")).anySatisfy(ix -> assertThat(ix)
                        .contains("job_claim_idx").endsWith("(queue, priority DESC, run_at, id) WHERE (state = 'pending'::text)"))
                .anySatisfy(ix -> assertThat(ix).startsWith("CREATE UNIQUE INDEX job_unique_key_idx")
                        .endsWith("(queue, unique_key) WHERE (unique_key IS NOT NULL)"))
                .anySatisfy(ix -> assertThat(ix).contains("job_rescue_idx")
                        .endsWith("(claim_expires_at) WHERE (state = 'processing'::text)"))
                .anySatisfy(ix -> assertThat(ix).contains("job_expiry_idx")
                        .endsWith("(expires_at) WHERE ((state = 'pending'::text) AND (expires_at IS NOT NULL))"));
    }

    @Test
    void jobDeadKeepsDiagnosisReasonAndRetention() {
        Map<String, String> cols = cat.columns("job_dead");
        assertThat(cols).containsEntry("id", "bigint not null")
                .containsEntry("payload", "bytea not null")
                .containsEntry("reason", "text not null")
                .containsEntry("last_error", "text")
                .containsEntry("died_at", "timestamp with time zone not null")
                .containsEntry("purge_after", "timestamp with time zone not null")
                .containsEntry("dead_letter_retention_ns", "bigint not null")
                .containsKeys("queue", "attempts", "max_attempts", "worker_id", "unique_key", "created_at", "headers")
                .doesNotContainKeys("state", "claim_token", "claim_expires_at");
        assertThat(cat.constraints("job_dead", 'p')).containsExactly("PRIMARY KEY (id)");
        assertThat(cat.constraints("job_dead", 'c')).anySatisfy(c -> assertThat(c)
                .contains("'failed'").contains("'expired'").contains("'claim_expired'").contains("'discarded'"));
        assertThat(cat.indexes("job_dead")).anySatisfy(ix -> assertThat(ix).endsWith("(purge_after)"))
                .anySatisfy(ix -> assertThat(ix).endsWith("(queue, id)"));
    }

    @Test
    void lockIsOneRowPerNameWithAFencingToken() {
        assertThat(cat.columns("lock")).containsEntry("name", "text not null")
                .containsEntry("owner", "text")
                .containsEntry("token", "uuid")
                .containsEntry("fencing_token", "bigint not null")
                .containsEntry("acquired_at", "timestamp with time zone not null")
                .containsEntry("expires_at", "timestamp with time zone not null");
        assertThat(cat.constraints("lock", 'p')).containsExactly("PRIMARY KEY (name)");
        assertThat(cat.constraints("lock", 'c')).contains("CHECK ((fencing_token >= 1))")
                .anySatisfy(c -> assertThat(c).contains("owner IS NULL").contains("token IS NULL"));
    }
}
