package dev.sluice;

import dev.sluice.internal.text.Echo;
import java.util.Locale;

/** Which delivery events a stream records in its {@code delivery_log_<id>} table. */
public enum DeliveryLogMode {
    /** Record nothing. */
    OFF,
    /** Record failed, delayed and dead-lettered deliveries (the default). */
    FAILURES,
    /** Record every delivery, including successes. */
    ALL;

    /** The value stored in the database ({@code off}, {@code failures}, {@code all}). */
    public String sqlValue() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses the stored or user-typed value, case-insensitively. */
    public static DeliveryLogMode parse(String text) {
        try {
            return valueOf(text.trim().toUpperCase(Locale.ROOT));
        } catch (RuntimeException e) {
            throw new SluiceException(ErrorCode.INVALID_CONFIG,
                    "delivery log mode must be one of off, failures, all (got '" + Echo.of(text) + "')");
        }
    }
}
