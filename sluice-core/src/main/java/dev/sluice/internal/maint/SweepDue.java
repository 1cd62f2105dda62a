package dev.sluice.internal.maint;

import java.time.Duration;
import java.time.Instant;

/** When the next row of one TTL sweep can be due, for the TTL it was computed with. */
final class SweepDue {
    private Duration ttl;
    private Instant at;

    boolean known(Duration forTtl) {
        return at != null && forTtl.equals(ttl);
    }

    boolean skips(Duration forTtl, Instant now) {
        return known(forTtl) && now.isBefore(at);
    }

    void set(Duration forTtl, Instant when) {
        this.ttl = forTtl;
        this.at = when;
    }

    Instant at() {
        return at;
    }
}
