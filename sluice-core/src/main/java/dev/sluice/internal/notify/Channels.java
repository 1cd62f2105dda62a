package dev.sluice.internal.notify;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The LISTEN/NOTIFY channel of an installation schema. One channel per schema; the payload is the
 * stream id (tiny, never the message). PostgreSQL folds identical notifications of one transaction,
 * so a producing transaction sends exactly one per stream.
 */
public final class Channels {
    private static final int MAX_CHANNEL_BYTES = 63;

    /**
     * The wake-up a statement sends inside its own transaction, or none: two parameters, the channel (NULL: send
     * nothing — the caller sends it after the commit, see {@link WakeSender}) and the payload. An expression that
     * yields NULL either way, for a statement's materialized first CTE.
     */
    public static final String WAKE_IN_TRANSACTION =
            "(SELECT pg_notify(n.ch, n.wake) FROM (SELECT ?::text, ?::text) AS n(ch, wake) WHERE n.ch IS NOT NULL)";

    private Channels() {
    }

    public static String forSchema(String schema) {
        String channel = "sluice:" + schema;
        if (channel.getBytes(StandardCharsets.UTF_8).length <= MAX_CHANNEL_BYTES) {
            return channel;
        }
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(schema.getBytes(StandardCharsets.UTF_8));
            return "sluice:" + HexFormat.of().formatHex(digest, 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
