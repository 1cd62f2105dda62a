package dev.sluice.spring;

import dev.sluice.WorkOptions;
import java.time.Duration;

/** {@code sluice.worker.*}: defaults of every {@link SluiceJob} worker ({@link WorkOptions}). */
public class SluiceWorkerProperties {
    /** Job handlers of one worker running at once. */
    private int concurrency = 8;

    /** Fallback poll while LISTEN/NOTIFY wake-ups are unavailable. */
    private Duration pollInterval = Duration.ofSeconds(1);

    /** Safety re-check of an idle queue while wake-ups are healthy. */
    private Duration idleCheck = Duration.ofSeconds(30);

    /** How long closing a worker (context shutdown) waits for running handlers. */
    private Duration shutdownTimeout = Duration.ofSeconds(30);

    /** How often a worker rescues expired claims of the schema's queues (0 turns it off). */
    private Duration maintenanceInterval = Duration.ofSeconds(5);

    /** Whether workers use LISTEN/NOTIFY wake-ups on enqueue. */
    private boolean wakeups = true;

    /** Jobs a worker may hold claimed beyond its running handlers. */
    private int prefetch = 0;

    /** The options these properties describe (checked by the library: an out-of-range value throws coded). */
    public WorkOptions toOptions() {
        return new WorkOptions(concurrency, null, pollInterval, idleCheck, shutdownTimeout, maintenanceInterval, wakeups, prefetch);
    }

    /** @return the concurrency */
    public int getConcurrency() {
        return concurrency;
    }

    /** @param concurrency the concurrency */
    public void setConcurrency(int concurrency) {
        this.concurrency = concurrency;
    }

    /** @return the poll interval */
    public Duration getPollInterval() {
        return pollInterval;
    }

    /** @param pollInterval the poll interval */
    public void setPollInterval(Duration pollInterval) {
        this.pollInterval = pollInterval;
    }

    /** @return the idle check */
    public Duration getIdleCheck() {
        return idleCheck;
    }

    /** @param idleCheck the idle check */
    public void setIdleCheck(Duration idleCheck) {
        this.idleCheck = idleCheck;
    }

    /** @return the shutdown timeout */
    public Duration getShutdownTimeout() {
        return shutdownTimeout;
    }

    /** @param shutdownTimeout the shutdown timeout */
    public void setShutdownTimeout(Duration shutdownTimeout) {
        this.shutdownTimeout = shutdownTimeout;
    }

    /** @return the maintenance interval */
    public Duration getMaintenanceInterval() {
        return maintenanceInterval;
    }

    /** @param maintenanceInterval the maintenance interval */
    public void setMaintenanceInterval(Duration maintenanceInterval) {
        this.maintenanceInterval = maintenanceInterval;
    }

    /** @return whether wake-ups are on */
    public boolean isWakeups() {
        return wakeups;
    }

    /** @param wakeups whether wake-ups are on */
    public void setWakeups(boolean wakeups) {
        this.wakeups = wakeups;
    }

    /** @return the prefetch */
    public int getPrefetch() {
        return prefetch;
    }

    /** @param prefetch the prefetch */
    public void setPrefetch(int prefetch) {
        this.prefetch = prefetch;
    }
}
