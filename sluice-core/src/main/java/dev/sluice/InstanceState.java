package dev.sluice;

/** What a worker instance is doing, as its process last heard from the database. */
public enum InstanceState {
    /** Live and allowed to work. */
    ACTIVE,
    /** Live, but the worker already has its target of active instances; takes over when one leaves or expires. */
    STANDBY,
    /** Live, but its worker's target is 0: it claims nothing until the target changes. */
    PAUSED,
    /** Its lease ran out and its process has not renewed it (killed, frozen or cut off); the manager deletes it. */
    EXPIRED
}
