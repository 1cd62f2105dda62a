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
