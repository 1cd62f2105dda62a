package dev.sluice.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/** Reads of meters for the metrics tests: 0 (or NaN for a gauge) when the meter is not registered. */
final class Meters {
    private Meters() {
    }

    static double counter(MeterRegistry r, String name, String... tags) {
        Counter c = r.find(name).tags(tags).counter();
        return c == null ? 0 : c.count();
    }

    static long timerCount(MeterRegistry r, String name, String... tags) {
        Timer t = r.find(name).tags(tags).timer();
        return t == null ? 0 : t.count();
    }

    static double gauge(MeterRegistry r, String name, String... tags) {
        Gauge g = r.find(name).tags(tags).gauge();
        return g == null ? Double.NaN : g.value();
    }

    static boolean hasGauge(MeterRegistry r, String name, String... tags) {
        return r.find(name).tags(tags).gauge() != null;
    }
}
