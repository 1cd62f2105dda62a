package dev.sluice;

import java.util.Objects;

/**
 * One job of an {@link Queue#enqueueBatch(java.util.List)} call.
 *
 * @param payload the payload (not null)
 * @param options the enqueue options ({@link EnqueueOptions#NONE} when none)
 * @param <T>     the payload type
 */
public record NewJob<T>(T payload, EnqueueOptions options) {

    /** Replaces null options by {@link EnqueueOptions#NONE}; a null payload is refused at enqueue. */
    public NewJob {
        options = options == null ? EnqueueOptions.NONE : options;
    }

    /** A job without options. */
    public static <T> NewJob<T> of(T payload) {
        return new NewJob<>(payload, EnqueueOptions.NONE);
    }

    /** A job with options. */
    public static <T> NewJob<T> of(T payload, EnqueueOptions options) {
        return new NewJob<>(payload, Objects.requireNonNull(options, "options"));
    }
}
