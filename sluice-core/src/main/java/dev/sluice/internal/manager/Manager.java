package dev.sluice.internal.manager;

import dev.sluice.internal.fleet.Instances;
import dev.sluice.internal.fleet.WorkerInstance;
import dev.sluice.internal.fleet.WorkerKey;
import dev.sluice.internal.jdbc.SqlErrors;
import dev.sluice.internal.runtime.ClientRuntime;
import dev.sluice.internal.runtime.PollLoop;
import java.time.Duration;

/**
 * This client's candidacy for the schema's manager: an instance of the {@code manager} worker (target 1), so one
 * client of the schema holds it at a time and a standby takes over when the holder leaves (at once) or dies
 * (within one lease). While it holds it, a loop on the shared scheduler runs a {@link MaintenancePass} every
 * interval (the first one interval at most after it took over).
 */
public final class Manager implements AutoCloseable {
    private final Instances instances;
    private final MaintenancePass pass;
    private final String holder;
    private final long intervalNanos;
    private final PollLoop loop;
    private WorkerInstance instance;
    private boolean started;
    private volatile boolean closed;
    private volatile long passes;

    public Manager(Instances instances, MaintenancePass pass, String holder, Duration interval, ClientRuntime runtime) {
        this.instances = instances;
        this.pass = pass;
        this.holder = holder;
        this.intervalNanos = interval.toNanos();
        this.loop = runtime.loop("manager", this::poll, SqlErrors::maxPollBackoffMillis);
    }

    /** Joins the election (the claim happens in the heartbeat, no I/O here); idempotent. */
    public synchronized void start() {
        if (started || closed) {
            return;
        }
        started = true;
        instance = instances.joinLater(WorkerKey.manager());
        // No wake when it takes over: a standby's loop looks every interval, so the first pass runs one interval
        // (at most) after this client became the manager, never in the first moments of a new process.
        loop.start(intervalNanos);
    }

    private long poll() {
        WorkerInstance i = instance;
        if (closed || i == null || !i.open()) {
            return intervalNanos;
        }
        pass.run(holder);
        passes++;
        return intervalNanos;
    }

    /** Whether this client is the manager now. */
    public boolean holding() {
        WorkerInstance i = instance;
        return i != null && i.open();
    }

    /** Passes this client ran as the manager. */
    public long passes() {
        return passes;
    }

    /** Stops running passes (a pass in progress ends first) and leaves the election, so a standby takes over at once. */
    @Override
    public synchronized void close() {
        closed = true;
        loop.close();
        if (instance != null) {
            instance.leave();
        }
    }
}
