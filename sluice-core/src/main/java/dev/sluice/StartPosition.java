package dev.sluice;

import java.time.Instant;
import java.util.Objects;

/** Where a new consumer group starts. Read only when the group is created. */
public sealed interface StartPosition {
    /** Every message still in the log (the default). */
    static StartPosition beginning() {
        return Beginning.INSTANCE;
    }

    /** Only messages produced after the group is created (never skipping a late commit below the head). */
    static StartPosition head() {
        return Head.INSTANCE;
    }

    /** Messages with ids at or above {@code id}. */
    static StartPosition atId(long id) {
        if (id < 1) {
            throw new SluiceException(ErrorCode.INVALID_CONFIG, "a start id must be at least 1 (got " + id + ")");
        }
        return new AtId(id);
    }

    /** Messages produced at or after {@code time}. */
    static StartPosition atTime(Instant time) {
        return new AtTime(Objects.requireNonNull(time, "time"));
    }

    enum Beginning implements StartPosition {
        INSTANCE
    }

    enum Head implements StartPosition {
        INSTANCE
    }

    record AtId(long id) implements StartPosition {
    }

    record AtTime(Instant time) implements StartPosition {
    }
}
