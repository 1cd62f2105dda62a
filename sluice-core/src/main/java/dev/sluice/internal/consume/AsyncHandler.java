package dev.sluice.internal.consume;

import dev.sluice.Handler;
import dev.sluice.Message;
import dev.sluice.Outcome;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;

/**
 * A handler whose outcome arrives later, on whatever thread completes it (the HTTP pull bridge: the outcome comes
 * with a later request). The ranges of a {@code parallel} group call {@link #start} from the consumer's loop and
 * record each outcome when its stage completes, so no thread waits per message; everywhere else (the chains of the
 * keyed policies, exception rows, the buckets of a partitioned group) it is called through {@link #handle}, which
 * waits for the stage, so every rule of those paths holds unchanged.
 *
 * <p>Messages out at once: fewer than {@code concurrency + 2 × batchSize} (the loop claims a further range while
 * fewer than {@code concurrency + batchSize} are out).
 *
 * <p>{@link #start} must not block: it runs on the consumer's loop. A stage completed exceptionally, or a throw from
 * {@code start}, is a retry (as a handler's throw); a null outcome is a success.
 */
public interface AsyncHandler<T> extends Handler<T> {
    /** Hands the message on; the stage completes with its outcome. */
    CompletionStage<Outcome> start(Message<T> message);

    @Override
    default Outcome handle(Message<T> message) throws Exception {
        try {
            return start(message).toCompletableFuture().get();
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        }
    }
}
