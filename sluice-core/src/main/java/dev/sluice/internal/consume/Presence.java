package dev.sluice.internal.consume;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

/**
 * Liveness of a group's consumers without any writes: every live consumption holds a shared
 * session-level advisory lock on its client's session connection; the lock vanishes with the
 * connection (crash, network loss). An operator action that must not race live consumers tries the
 * exclusive form inside its transaction.
 */
public final class Presence {
    private Presence() {
    }

    /** The advisory key text of a group's presence. */
    public static String key(String schema, long groupId) {
        return "sluice.presence:" + schema + ":" + groupId;
    }

    /** Whether any consumer of the group is live; takes the exclusive lock for the rest of the caller's transaction when none is. */
    public static boolean anyLive(Connection c, String schema, long groupId) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_try_advisory_xact_lock(hashtextextended(?, 0))")) {
            ps.setString(1, key(schema, groupId));
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return !rs.getBoolean(1);
            }
        }
    }
}
