package dev.sluice;

/**
 * Told about the changes of a {@link Leadership}. Calls alternate strictly (elected, revoked, elected,
 * …) and come from the leadership's own threads; keep them short (start or stop your leader work
 * elsewhere). An exception from a callback is logged and does not change the leadership.
 */
public interface LeaderListener {

    /**
     * This process became the leader. {@code fencingToken} is strictly greater than every earlier
     * leader's: pass it with the leader's writes so a deposed leader's late writes can be refused.
     */
    void onElected(long fencingToken);

    /**
     * This process is no longer the leader: a renewal was refused (the lock was lost), the lock would
     * expire before a renewal could get through, or the leadership was closed. Called before the lock's
     * expiry in the database whenever the process noticed in time, so two listeners are not leading at
     * once; stop leader work now.
     */
    void onRevoked();
}
