package dev.sluice.bench.lab;

import dev.sluice.bench.XidPin;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Locale;
import java.util.function.Consumer;

/**
 * The lab's "unrelated long transaction" fault: every {@link LabOptions#pinEvery()} a connection of its
 * own opens a transaction, allocates an xid ({@code pg_current_xact_id()}), touches no Sluice or lab table
 * and stays idle for {@link LabOptions#pinFor()} — longer than the consumers' lease — then rolls back. While
 * it is open no snapshot's xmin can pass its id, as with any other application's long transaction on the
 * server (docs/fence.md). A pin is started only when it can be held to its end before
 * the producers stop; one that cannot be opened (the server restarting) is not counted as fired.
 */
final class UnrelatedXidFault implements AutoCloseable {
    /** Its name in {@code faults_fired} and in the ledger's {@code fault.kind}. */
    static final String KIND = "unrelated_xid";
    /** What {@code pg_stat_activity.application_name} shows for the pin (not a worker: terminations spare it). */
    static final String APPLICATION_NAME = "sluice-lab-pin";

    /** Writes a fired fault to the ledger (and counts it). */
    interface Recorder {
        void record(String kind, String detail) throws SQLException;
    }

    /** Opens an orchestrator connection to look at the pin from another session. */
    interface Connector {
        Connection connect() throws SQLException;
    }

    private final String url;
    private final LabOptions o;
    private final long endNanos;
    private final Recorder recorder;
    private final Connector observer;
    private final Consumer<String> progress;
    private long nextNanos;
    private XidPin pin;
    private long releaseAtNanos;

    /**
     * @param url      the lab's database (the pin's own connection goes there)
     * @param o        the run's options; the fault is off unless {@link LabOptions#pins()}
     * @param start    the run's start on {@link System#nanoTime()}
     * @param end      when the producers stop, on the same clock
     */
    UnrelatedXidFault(String url, LabOptions o, long start, long end, Recorder recorder, Connector observer,
                      Consumer<String> progress) {
        this.url = url;
        this.o = o;
        this.endNanos = end;
        this.recorder = recorder;
        this.observer = observer;
        this.progress = progress;
        this.nextNanos = o.pins() ? start + o.pinEvery().toNanos() : Long.MAX_VALUE;
    }

    /** Ends a pin whose time is up and starts the next one when due; called by the fault loop. */
    void tick(long now) throws SQLException {
        if (pin != null && now >= releaseAtNanos) {
            release();
        }
        if (now < nextNanos) {
            return;
        }
        nextNanos += o.pinEvery().toNanos();
        if (pin != null || now + o.pinFor().toNanos() > endNanos) {
            return;
        }
        try {
            pin = XidPin.open(url, APPLICATION_NAME);
        } catch (SQLException e) {
            progress.accept("lab: could not open the unrelated transaction (" + e.getMessage() + "); not counted");
            return;
        }
        releaseAtNanos = now + o.pinFor().toNanos();
        recorder.record(KIND, "xid " + pin.xid() + " (pid " + pin.pid() + ") idle for " + Lab.seconds(o.pinFor()));
        progress.accept("lab: unrelated transaction holds xid " + pin.xid() + " for " + Lab.seconds(o.pinFor()));
    }

    private void release() {
        String held;
        try (Connection c = observer.connect()) {
            held = pin.heldAsSeenBy(c) ? "held to the end" : "GONE before its end";
        } catch (SQLException e) {
            held = "not checked: " + e.getMessage();
        }
        pin.close();
        progress.accept(String.format(Locale.ROOT, "lab: unrelated transaction xid %d rolled back after %.1f s (%s)",
                pin.xid(), pin.heldSeconds(), held));
        pin = null;
    }

    /** Rolls back a pin still open (the loop ended or failed). */
    @Override
    public void close() {
        if (pin != null) {
            pin.close();
            pin = null;
        }
    }
}
