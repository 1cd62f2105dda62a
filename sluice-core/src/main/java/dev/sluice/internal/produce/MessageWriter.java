package dev.sluice.internal.produce;

import dev.sluice.Produced;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/** Writes a list of encoded messages on a connection the caller manages (one or two statements). */
final class MessageWriter {
    private MessageWriter() {
    }

    /**
     * Inserts {@code messages} (in order) into the target's log; returns one result per message. The
     * caller owns the transaction. Repeated idempotency keys inside the list resolve to the first.
     * {@code wake}: the transaction sends the stream's wake-up itself (a caller's transaction without an
     * after-commit action of ours); otherwise the caller sends it after the commit.
     */
    static List<Produced> write(Connection c, StreamTarget t, List<Encoded> messages, boolean wake) throws SQLException {
        // In-list duplicates of an idempotency key: only the first goes to the database.
        List<Encoded> unique = new ArrayList<>(messages.size());
        int[] slot = new int[messages.size()];
        Map<UUID, Integer> firstByKey = new HashMap<>();
        boolean full = false;
        for (int i = 0; i < messages.size(); i++) {
            Encoded m = messages.get(i);
            full |= m.needsFullPath();
            if (m.idempotencyKey() != null) {
                Integer first = firstByKey.putIfAbsent(m.idempotencyKey(), unique.size());
                if (first != null) {
                    slot[i] = -1 - first;
                    continue;
                }
            }
            slot[i] = unique.size();
            unique.add(m);
        }
        Produced[] results = full ? writeFull(c, t, unique, wake) : writePlain(c, t, unique, wake);
        List<Produced> out = new ArrayList<>(messages.size());
        for (int i = 0; i < messages.size(); i++) {
            out.add(slot[i] >= 0 ? results[slot[i]] : new Produced(results[-1 - slot[i]].id(), true));
        }
        return out;
    }

    private static Produced[] writePlain(Connection c, StreamTarget t, List<Encoded> ms, boolean wake) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(ProduceSql.plainInsert(t.tables()))) {
            int i = bindWake(ps, t, wake);
            bindColumns(c, ps, i, ms);
            long[] ids = new long[ms.size()];
            int n = 0;
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    ids[n++] = rs.getLong(1);
                }
            }
            if (n != ms.size()) {
                throw new IllegalStateException("inserted " + n + " rows for " + ms.size() + " messages");
            }
            // Ids are drawn in input order, so ascending ids map to the inputs in order.
            java.util.Arrays.sort(ids);
            Produced[] out = new Produced[n];
            for (int k = 0; k < n; k++) {
                out[k] = new Produced(ids[k], false);
            }
            return out;
        }
    }

    private static Produced[] writeFull(Connection c, StreamTarget t, List<Encoded> ms, boolean wake) throws SQLException {
        Produced[] out = new Produced[ms.size()];
        Map<UUID, Integer> duplicates = new LinkedHashMap<>();
        try (PreparedStatement ps = c.prepareStatement(ProduceSql.fullInsert(t.tables()))) {
            int i = bindWake(ps, t, wake);
            UUID[] keys = new UUID[ms.size()];
            for (int k = 0; k < ms.size(); k++) {
                keys[k] = ms.get(k).idempotencyKey();
            }
            ps.setArray(i++, c.createArrayOf("uuid", keys));
            i = bindColumns(c, ps, i, ms);
            ps.setDouble(i, t.idempotencyKeyTtlNanos() / 1e9);
            int n = 0;
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    long id = rs.getLong(1);
                    if (rs.getBoolean(2)) {
                        out[n] = new Produced(id, false);
                    } else {
                        duplicates.put(ms.get(n).idempotencyKey(), n);
                    }
                    n++;
                }
            }
            if (n != ms.size()) {
                throw new IllegalStateException("got " + n + " results for " + ms.size() + " messages");
            }
        }
        if (!duplicates.isEmpty()) {
            try (PreparedStatement ps = c.prepareStatement(ProduceSql.originalIds(t.tables()))) {
                ps.setArray(1, c.createArrayOf("uuid", duplicates.keySet().toArray(new UUID[0])));
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        int index = duplicates.remove(rs.getObject(1, UUID.class));
                        out[index] = new Produced(rs.getLong(2), true);
                    }
                }
            }
            if (!duplicates.isEmpty()) {
                throw new IllegalStateException("idempotency keys vanished while locked: " + duplicates.keySet());
            }
        }
        return out;
    }

    /** The channel, or NULL for no wake-up in the transaction ({@code Channels.WAKE_IN_TRANSACTION}), and the payload. */
    private static int bindWake(PreparedStatement ps, StreamTarget t, boolean wake) throws SQLException {
        ps.setString(1, wake ? t.notifyChannel() : null);
        ps.setString(2, Long.toString(t.id()));
        return 3;
    }

    private static int bindColumns(Connection c, PreparedStatement ps, int i, List<Encoded> ms) throws SQLException {
        int n = ms.size();
        Integer[] sv = new Integer[n];
        String[] ct = new String[n];
        String[] rk = new String[n];
        String[] mk = new String[n];
        Long[] cr = new Long[n];
        String[] h = new String[n];
        String[] o = new String[n];
        byte[][] p = new byte[n][];
        for (int k = 0; k < n; k++) {
            Encoded m = ms.get(k);
            sv[k] = m.schemaVersion();
            ct[k] = m.contentType();
            rk[k] = m.routingKey();
            mk[k] = m.messageKey();
            cr[k] = m.compactionRank();
            h[k] = m.headersJson();
            o[k] = m.optionsJson();
            p[k] = m.payload();
        }
        Array[] arrays = {c.createArrayOf("int4", sv), c.createArrayOf("text", ct), c.createArrayOf("text", rk),
                c.createArrayOf("text", mk), c.createArrayOf("int8", cr), c.createArrayOf("text", h),
                c.createArrayOf("text", o), c.createArrayOf("bytea", p)};
        for (Array a : arrays) {
            ps.setArray(i++, a);
        }
        return i;
    }
}
