package dev.sluice;

/**
 * One message of a {@link Producer#produceBatch(java.util.List)}.
 *
 * @param payload the payload (not null)
 * @param options its options ({@link ProduceOptions#NONE} when null)
 */
public record Outgoing<T>(T payload, ProduceOptions options) {
    public Outgoing {
        options = options == null ? ProduceOptions.NONE : options;
    }

    /** A message without options. */
    public static <T> Outgoing<T> of(T payload) {
        return new Outgoing<>(payload, ProduceOptions.NONE);
    }

    /** A message with options. */
    public static <T> Outgoing<T> of(T payload, ProduceOptions options) {
        return new Outgoing<>(payload, options);
    }
}
