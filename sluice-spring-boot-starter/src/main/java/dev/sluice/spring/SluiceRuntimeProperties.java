package dev.sluice.spring;

/** {@code sluice.runtime.*}: the client's shared threads (Sluice.builder().runtimeThreads). */
public class SluiceRuntimeProperties {
    /** Scheduler threads of the client (timers, leases, wake-ups). */
    private int schedulerThreads = 4;

    /** Handler threads shared by every consumption and worker of the client. */
    private int handlerThreads = 64;

    /** @return the scheduler threads */
    public int getSchedulerThreads() {
        return schedulerThreads;
    }

    /** @param schedulerThreads the scheduler threads */
    public void setSchedulerThreads(int schedulerThreads) {
        this.schedulerThreads = schedulerThreads;
    }

    /** @return the handler threads */
    public int getHandlerThreads() {
        return handlerThreads;
    }

    /** @param handlerThreads the handler threads */
    public void setHandlerThreads(int handlerThreads) {
        this.handlerThreads = handlerThreads;
    }
}
