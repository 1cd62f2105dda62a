package dev.sluice.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Works a job queue with the annotated bean method, started with the application context and drained when it closes.
 *
 * <p>The method takes the payload, a {@code dev.sluice.JobHandle<T>}, or both (payload first). Returning acks the job
 * (a non-null return value completes it with that result, for queues that keep runs); throwing fails it (retried after
 * the backoff, dead after the last attempt). A job's attempts and backoff are stamped at enqueue
 * ({@code QueueOptions}), so they are not options here. It is called through the bean, so {@code @Transactional}
 * applies. Placeholders are allowed and values are checked at startup ({@code SLU-0126 LISTENER_INVALID}).
 *
 * <pre>{@code
 * @SluiceJob(queue = "emails", concurrency = "4")
 * void send(Email email) { ... }
 * }</pre>
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface SluiceJob {
    /** The queue's name. */
    String queue();

    /** Handlers running at once (WorkOptions.concurrency); default {@code sluice.worker.concurrency}. */
    String concurrency() default "";

    /** Jobs held claimed beyond the running handlers (WorkOptions.prefetch); default {@code sluice.worker.prefetch}. */
    String prefetch() default "";

    /** How long closing waits for running handlers (WorkOptions.shutdownTimeout). */
    String shutdownTimeout() default "";
}
