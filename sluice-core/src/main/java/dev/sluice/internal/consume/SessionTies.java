package dev.sluice.internal.consume;

import dev.sluice.internal.notify.ClientSession;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A consumption's ties to its client's session (docs/consume.md, "wake-ups"): the group's presence lock, which
 * operator actions read as "consumers are live", and the stream's wake-ups. Shared by both kinds of consumer.
 */
final class SessionTies {
    private final ConsumerContext ctx;
    private final Supplier<ClientSession> sessions;
    private final String presenceKey;
    private volatile ClientSession session;
    private AutoCloseable wakeRegistration;
    private boolean started;

    SessionTies(ConsumerContext ctx, String schema, Supplier<ClientSession> sessions) {
        this.ctx = ctx;
        this.sessions = sessions;
        this.presenceKey = Presence.key(schema, ctx.g.groupId());
    }

    /** Takes the presence lock (waits up to 5 s for it) and, with wake-ups on, listens for the stream's notifications. */
    void start(Runnable notified) {
        started = true;
        ClientSession s = sessions == null ? null : sessions.get();
        this.session = s;
        if (s == null) {
            return;
        }
        try {
            s.holdPresence(presenceKey).get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            ConsumerContext.log.warn("presence lock not confirmed yet: group={} error={}", ctx.g.groupName(), e.toString());
        }
        this.wakeRegistration = ctx.o.wakeups() ? s.onWake(ctx.g.streamId(), notified) : null;
    }

    /** Whether wake-ups arrive (so idle waits may be long). */
    boolean wakeupsHealthy() {
        ClientSession s = session;
        return s != null && ctx.o.wakeups() && s.healthy();
    }

    /** Stops listening and lets go of the presence lock (waiting, so an operator action right after sees the group stopped). */
    void stop() {
        if (wakeRegistration != null) {
            try {
                wakeRegistration.close();
            } catch (Exception ignored) {
                // nothing to release
            }
        }
        ClientSession s = session;
        if (s != null && started) {
            try {
                s.releasePresence(presenceKey).get(5, TimeUnit.SECONDS);
            } catch (Exception e) {
                ctx.warn("presence release not confirmed", e);
            }
        }
    }
}
