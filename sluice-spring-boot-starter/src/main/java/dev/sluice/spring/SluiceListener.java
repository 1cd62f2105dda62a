package dev.sluice.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Consumes a consumer group of a stream with the annotated bean method, started with the application context and
 * drained when it closes.
 *
 * <p>The method takes the payload ({@code byte[]}, {@code String} or a JSON-mapped type), a
 * {@code dev.sluice.Message<T>}, or both (payload first), and returns {@code dev.sluice.Outcome} or {@code void}
 * ({@code void} means success; throwing means retry after the group's backoff, dead after its last attempt). It is
 * called through the bean, so {@code @Transactional} and other proxies apply; a listener that produces inside its
 * own transaction joins it. Every string value may hold {@code ${...}} placeholders; every value is checked at startup
 * ({@code SLU-0126 LISTENER_INVALID}). Empty values mean the {@code sluice.consumer.*} defaults and, for the group's
 * declaration, the library's defaults (or what the stored group already declares).
 *
 * <pre>{@code
 * @SluiceListener(stream = "orders", group = "billing", maxAttempts = "10", bindings = "order.*")
 * Outcome onOrder(Order order, Message<Order> message) { ... }
 * }</pre>
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface SluiceListener {
    /** The stream's name. */
    String stream();

    /** The consumer group's name. */
    String group();

    /**
     * Whether the stream (with its defaults) and the group are registered when missing, and the group's declaration
     * updated when the annotation's differs from the stored one (default true: {@code "true"} or {@code "false"}).
     * With false the group must exist ({@code SLU-0106}-style not-found errors fail startup).
     */
    String register() default "true";

    /** The group's key policy: {@code parallel}, {@code exclusive} or {@code ordered} (GroupConfig.concurrency). */
    String concurrencyPolicy() default "";

    /** Routing patterns of the group (GroupConfig.bindings); empty means every message. */
    String[] bindings() default {};

    /**
     * Where a new group starts: {@code beginning}, {@code head}, {@code id:N} or {@code time:ISO-8601-instant}
     * (GroupConfig.start; read only when the group is created).
     */
    String start() default "";

    /** Attempts before a message is dead-lettered (RetryPolicy.maxAttempts, 1 to 1000). */
    String maxAttempts() default "";

    /** The wait after the first failed attempt, e.g. {@code 500ms} or {@code PT1S} (RetryPolicy.initialBackoff). */
    String initialBackoff() default "";

    /** The cap of the backoff (RetryPolicy.maxBackoff). */
    String maxBackoff() default "";

    /** Handler invocations running at once (ConsumeOptions.concurrency); default {@code sluice.consumer.concurrency}. */
    String concurrency() default "";

    /** Most messages one claim takes (ConsumeOptions.batchSize); default {@code sluice.consumer.batch-size}. */
    String batchSize() default "";

    /** How long a claim is held without renewal (ConsumeOptions.leaseTimeout). */
    String leaseTimeout() default "";

    /** How long closing waits for running handlers (ConsumeOptions.shutdownTimeout). */
    String shutdownTimeout() default "";
}
