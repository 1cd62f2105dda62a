package dev.sluice.spring;

import dev.sluice.ConsumeOptions;
import java.time.Duration;
import org.springframework.util.unit.DataSize;

/** {@code sluice.consumer.*}: defaults of every {@link SluiceListener} consumption ({@link ConsumeOptions}). */
public class SluiceConsumerProperties {
    /** Most messages one range claim takes. */
    private int batchSize = 64;

    /** Handler invocations of one listener running at once. */
    private int concurrency = 8;

    /** How long a claim is held without renewal (renewed every third of it while handlers run). */
    private Duration leaseTimeout = Duration.ofSeconds(30);

    /** Fallback poll while LISTEN/NOTIFY wake-ups are unavailable. */
    private Duration pollInterval = Duration.ofSeconds(1);

    /** Safety re-check of an idle group while wake-ups are healthy. */
    private Duration idleCheck = Duration.ofSeconds(30);

    /** How long closing a consumption (context shutdown) waits for running handlers. */
    private Duration shutdownTimeout = Duration.ofSeconds(30);

    /** Whether consumers use LISTEN/NOTIFY wake-ups. */
    private boolean wakeups = true;

    /** Byte budget of one range claim. */
    private DataSize maxBytes = DataSize.ofMegabytes(16);

    /** The options these properties describe (checked by the library: an out-of-range value throws coded). */
    public ConsumeOptions toOptions() {
        return ConsumeOptions.defaults().withBatchSize(batchSize).withConcurrency(concurrency).withLeaseTimeout(leaseTimeout)
                .withPollInterval(pollInterval).withIdleCheck(idleCheck).withShutdownTimeout(shutdownTimeout)
                .withWakeups(wakeups).withMaxBytes(maxBytes == null ? 0 : maxBytes.toBytes());
    }

    /** @return the batch size */
    public int getBatchSize() {
        return batchSize;
    }

    /** @param batchSize the batch size */
    public void setBatchSize(int batchSize) {
        this.batchSize = batchSize;
    }

    /** @return the concurrency */
    public int getConcurrency() {
        return concurrency;
    }

    /** @param concurrency the concurrency */
    public void setConcurrency(int concurrency) {
        this.concurrency = concurrency;
    }

    /** @return the lease timeout */
    public Duration getLeaseTimeout() {
        return leaseTimeout;
    }

    /** @param leaseTimeout the lease timeout */
    public void setLeaseTimeout(Duration leaseTimeout) {
        this.leaseTimeout = leaseTimeout;
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

    /** @return whether wake-ups are on */
    public boolean isWakeups() {
        return wakeups;
    }

    /** @param wakeups whether wake-ups are on */
    public void setWakeups(boolean wakeups) {
        this.wakeups = wakeups;
    }

    /** @return the byte budget */
    public DataSize getMaxBytes() {
        return maxBytes;
    }

    /** @param maxBytes the byte budget */
    public void setMaxBytes(DataSize maxBytes) {
        this.maxBytes = maxBytes;
    }
}
