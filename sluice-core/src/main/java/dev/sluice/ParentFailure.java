package dev.sluice;

/** What a parent's failure (dead, discarded or cancelled) does to a job that waits for it ({@link EnqueueOptions#after()}). */
public enum ParentFailure {
    /** The child is cancelled, with the parent named in the reason (the default); its own children follow theirs. */
    CANCEL,
    /** The failed parent counts as finished: the child runs once its other parents ended. */
    RUN;

    /** The stored lower-case name. */
    public String dbValue() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
