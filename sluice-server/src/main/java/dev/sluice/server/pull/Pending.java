package dev.sluice.server.pull;

import dev.sluice.Message;
import dev.sluice.Outcome;
import java.util.concurrent.CompletableFuture;

/**
 * One message the group's consumption handed to the bridge: its outcome is pending until an
 * HTTP claim takes it and an outcome arrives, the claim's lease ends, or the bridge stops.
 */
final class Pending {
    final Message<byte[]> message;
    /** Completed once; what the handler call returns (ignored by the engine after the bridge released it). */
    final CompletableFuture<Outcome> outcome = new CompletableFuture<>();

    Pending(Message<byte[]> message) {
        this.message = message;
    }

    long id() {
        return message.id();
    }
}
