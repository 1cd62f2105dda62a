package dev.sluice;

import java.sql.Connection;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Finds the transaction the calling thread is already in, so that producing and enqueuing join it: the message or
 * job commits, or rolls back, with the caller's own writes (a transactional outbox without an outbox table). Give
 * one to {@link Sluice.Builder#ambientTransaction}; the Spring Boot starter gives one that answers with the
 * connection of the current Spring-managed transaction.
 *
 * <p>When {@link #current()} answers a transaction, {@link Producer#produce}, {@link Producer#produceAsync} (run on
 * the caller's thread; the returned future is already complete), {@link Producer#produceBatch},
 * {@link Producer#produce(java.util.function.Function, ProduceOptions)} (no replay: the caller's transaction is not
 * Sluice's to repeat), {@link Queue#enqueue} and {@link Queue#enqueueBatch} write on its connection exactly as
 * {@link Producer#produceInTransaction} and {@link Queue#enqueueInTransaction} do; when it answers {@code null} they
 * run in transactions of their own as without one. Claims, acknowledgements, consumers and every other operation
 * always use connections of the client's own.
 */
@FunctionalInterface
public interface AmbientTransaction {
    /** No ambient transaction, ever (the default). */
    AmbientTransaction NONE = () -> null;

    /**
     * The open transaction of the calling thread, or {@code null} when it is in none. Called once per produce or
     * enqueue call on the caller's thread; it must be cheap and must not open a transaction.
     */
    Joined current();

    /** An open transaction of the caller's. */
    interface Joined {
        /** The transaction's connection (auto-commit off). Sluice never commits, rolls back or closes it. */
        Connection connection();

        /**
         * Runs {@code action} after the transaction committed (never after a rollback); Sluice wakes this process's
         * consumers or workers and counts its meters there. Implementations that cannot tell may drop the action:
         * other processes are woken by the commit's notification either way.
         */
        void afterCommit(Runnable action);
    }

    /** A joined transaction of a connection and a way to run work after its commit. */
    static Joined joined(Connection connection, Consumer<Runnable> afterCommit) {
        Objects.requireNonNull(connection, "connection");
        Objects.requireNonNull(afterCommit, "afterCommit");
        return new Joined() {
            @Override
            public Connection connection() {
                return connection;
            }

            @Override
            public void afterCommit(Runnable action) {
                afterCommit.accept(action);
            }
        };
    }
}
