package dev.sluice.internal.produce;

import dev.sluice.internal.notify.Channels;
import dev.sluice.internal.schema.FamilyTables;

/**
 * Every statement of the produce path. Both statements obtain the transaction id (and, inside a caller's
 * transaction, send the stream's one notification) in the materialized CTE {@code x} before any row draws an id
 * from the sequence — the ordering the consumer's snapshot fence relies on (docs/produce.md).
 */
final class ProduceSql {
    private ProduceSql() {
    }

    /** Plain messages (no idempotency key, no compaction): one statement, ids in input order. */
    static String plainInsert(FamilyTables t) {
        return """
            WITH x AS MATERIALIZED (SELECT pg_current_xact_id() AS xid, %3$s AS notified)
            INSERT INTO %1$s (id, schema_version, content_type, routing_key, message_key, compaction_rank, headers, options, payload)
            SELECT nextval('%2$s'), v.sv, v.ct, v.rk, v.mk, v.cr, v.h::jsonb, v.o::jsonb, v.p
            FROM x, unnest(?::int[], ?::text[], ?::text[], ?::text[], ?::bigint[], ?::text[], ?::text[], ?::bytea[])
                 WITH ORDINALITY AS v(sv, ct, rk, mk, cr, h, o, p, ord)
            WHERE x.xid IS NOT NULL
            ORDER BY v.ord
            RETURNING id
            """.formatted(t.messageLog(), t.messageLogSequence(), Channels.WAKE_IN_TRANSACTION);
    }

    /**
     * Messages with idempotency keys and/or compaction. Keys are claimed in sorted order (expired keys
     * are taken over), only accepted rows are written, and compaction heads are upserted in sorted key
     * order keeping the highest (schema_version, rank, id) — so concurrent batches never deadlock.
     * Returns, per input row in order: its drawn id and whether it was written.
     */
    static String fullInsert(FamilyTables t) {
        return """
            WITH x AS MATERIALIZED (SELECT pg_current_xact_id() AS xid, %5$s AS notified),
            input AS MATERIALIZED (
                SELECT v.ord, nextval('%2$s') AS id, v.ik, v.sv, v.ct, v.rk, v.mk, v.cr, v.h, v.o, v.p
                FROM x, unnest(?::uuid[], ?::int[], ?::text[], ?::text[], ?::text[], ?::bigint[], ?::text[], ?::text[], ?::bytea[])
                     WITH ORDINALITY AS v(ik, sv, ct, rk, mk, cr, h, o, p, ord)
                WHERE x.xid IS NOT NULL
                ORDER BY v.ord),
            fresh AS (
                INSERT INTO %3$s AS k (key, message_id)
                SELECT ik, id FROM input WHERE ik IS NOT NULL ORDER BY ik
                ON CONFLICT (key) DO UPDATE SET message_id = EXCLUDED.message_id, created_at = now()
                    WHERE k.created_at < now() - make_interval(secs => ?)
                RETURNING key),
            accepted AS MATERIALIZED (
                SELECT i.* FROM input i WHERE i.ik IS NULL OR i.ik IN (SELECT key FROM fresh)),
            heads AS (
                INSERT INTO %4$s AS h (compaction_key, message_id, schema_version, rank)
                SELECT DISTINCT ON (mk) mk, id, sv, cr FROM accepted WHERE cr IS NOT NULL
                ORDER BY mk, sv DESC, cr DESC, id DESC
                ON CONFLICT (compaction_key) DO UPDATE
                    SET message_id = EXCLUDED.message_id, schema_version = EXCLUDED.schema_version,
                        rank = EXCLUDED.rank, updated_at = now()
                    WHERE h.message_id IS NULL
                       OR (h.schema_version, h.rank, h.message_id) < (EXCLUDED.schema_version, EXCLUDED.rank, EXCLUDED.message_id)
                RETURNING 1),
            written AS (
                INSERT INTO %1$s (id, schema_version, content_type, routing_key, message_key, compaction_rank, headers, options, payload)
                SELECT id, sv, ct, rk, mk, cr, h::jsonb, o::jsonb, p FROM accepted ORDER BY id
                RETURNING id)
            SELECT i.id, i.id IN (SELECT id FROM written) AS written FROM input i ORDER BY i.ord
            """.formatted(t.messageLog(), t.messageLogSequence(), t.idempotencyKey(), t.compactionHead(),
                Channels.WAKE_IN_TRANSACTION);
    }

    /** The original message ids of duplicate idempotency keys (a new statement: it sees their committers). */
    static String originalIds(FamilyTables t) {
        return "SELECT key, message_id FROM " + t.idempotencyKey() + " WHERE key = ANY(?::uuid[])";
    }

    /**
     * The janitor's statements on {@code idempotency_key_<id>} and {@code compaction_head_<id>} (this package owns
     * both tables), built once per stream ({@link ProduceSweeps}). Deletes move at most a batch, picked by key from a
     * {@code LIMIT}ed subselect with {@code FOR UPDATE SKIP LOCKED} (a producer may hold the row), and re-check their
     * condition in the DELETE itself: under READ COMMITTED a row a producer updated meanwhile is re-evaluated, so a
     * key taken over or a head that got a winner survives.
     */
    static final class Sweeps {
        /**
         * Deletes up to a batch of keys older than the TTL, oldest first ({@code idempotency_key_<id>_created_at_idx}),
         * by the produce path's own rule ({@code created_at < now() - ttl}). Parameters: ttl seconds, limit, ttl seconds.
         */
        final String deleteExpiredKeys;
        /** The oldest key's creation time (null when there is none): a min over the created_at index. */
        final String oldestKey;
        /**
         * Deletes up to a batch of empty heads ({@code message_id IS NULL}) not updated within the TTL, by the partial
         * index {@code compaction_head_<id>_empty_idx}. Parameters: ttl seconds, limit, ttl seconds.
         */
        final String deleteEmptyHeads;
        /** The oldest empty head's last update (null when there is none), from the same partial index. */
        final String oldestEmptyHead;

        Sweeps(FamilyTables t) {
            String keyExpired = "created_at < now() - make_interval(secs => ?)";
            this.deleteExpiredKeys = "DELETE FROM " + t.idempotencyKey() + " WHERE key IN (SELECT key FROM " + t.idempotencyKey()
                    + " WHERE " + keyExpired + " ORDER BY created_at LIMIT ? FOR UPDATE SKIP LOCKED) AND " + keyExpired;
            this.oldestKey = "SELECT min(created_at) FROM " + t.idempotencyKey();
            String headIdle = "message_id IS NULL AND updated_at < now() - make_interval(secs => ?)";
            this.deleteEmptyHeads = "DELETE FROM " + t.compactionHead() + " WHERE compaction_key IN (SELECT compaction_key FROM "
                    + t.compactionHead() + " WHERE " + headIdle + " ORDER BY updated_at LIMIT ? FOR UPDATE SKIP LOCKED) AND " + headIdle;
            this.oldestEmptyHead = "SELECT min(updated_at) FROM " + t.compactionHead() + " WHERE message_id IS NULL";
        }
    }
}
