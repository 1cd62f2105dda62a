package dev.sluice;

import dev.sluice.internal.text.Echo;
import java.util.Locale;

/** How a consumer group coordinates messages that share a message key. */
public enum ConcurrencyPolicy {
    /** No key coordination (the default). */
    PARALLEL,
    /** At most one in-flight delivery per message key in the group; a busy key defers the message. */
    EXCLUSIVE,
    /** A message runs only after every earlier message with its key is resolved (success or dead). */
    ORDERED;

    public String sqlValue() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static ConcurrencyPolicy parse(String s) {
        try {
            return valueOf(s.trim().toUpperCase(Locale.ROOT));
        } catch (RuntimeException e) {
            throw new SluiceException(ErrorCode.INVALID_CONFIG, "concurrency must be parallel, exclusive or ordered (got '" + Echo.of(s) + "')");
        }
    }
}
