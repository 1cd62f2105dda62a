package dev.sluice.internal.queue;

import java.util.concurrent.atomic.AtomicBoolean;

/** A job a worker claimed, waiting for a handler slot or running; shared by the worker and its {@link Heartbeats}. */
final class RunningJob<T> {
    final ClaimedJob<T> handle;
    /** Taken by whoever gets the job first: its handler run, or the drain (which gives it back). */
    final AtomicBoolean taken = new AtomicBoolean();
    /** When the claim is extended next ({@link System#nanoTime()}). */
    volatile long nextBeatNanos;
    /** A heartbeat was refused: the claim expired or was taken over; no more heartbeats for it. */
    volatile boolean lost;

    RunningJob(ClaimedJob<T> handle, long nextBeatNanos) {
        this.handle = handle;
        this.nextBeatNanos = nextBeatNanos;
    }
}
