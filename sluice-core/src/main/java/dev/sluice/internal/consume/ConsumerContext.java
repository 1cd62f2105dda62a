package dev.sluice.internal.consume;

import dev.sluice.ConcurrencyPolicy;
import dev.sluice.ConsumeOptions;
import dev.sluice.DeliveryLogMode;
import dev.sluice.internal.consume.GroupRegistry.GroupRef;
import dev.sluice.internal.jdbc.Db;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What every part of one running consumption shares: the group, its statement owners, this consumer's lease
 * token and lease length, its options, counters (and the group's meters), its spans, and a rate-limited warning.
 */
final class ConsumerContext {
    static final Logger log = LoggerFactory.getLogger(GroupConsumer.class);

    final Db db;
    final GroupRef g;
    final ConsumeSql sql;
    final ConsumeOptions o;
    final ConcurrencyPolicy policy;
    final DeliveryLogMode logMode;
    final UUID token = UUID.randomUUID();
    final double leaseSeconds;
    final ConsumerStats stats;
    /** The spans deliveries run their handler in (no-ops without OpenTelemetry; docs/tracing.md). */
    final dev.sluice.internal.tracing.ProcessSpans spans;
    private volatile long lastWarn;

    ConsumerContext(Db db, GroupRef g, ConsumeOptions o, dev.sluice.internal.metrics.DeliveryMeters meters,
                    dev.sluice.internal.tracing.ProcessSpans spans) {
        this.db = db;
        this.spans = spans;
        this.stats = new ConsumerStats(meters);
        this.g = g;
        this.sql = ConsumeSql.of(g.tables());
        this.o = o;
        this.policy = g.config().concurrency();
        this.logMode = g.deliveryLogMode();
        this.leaseSeconds = o.leaseTimeout().toMillis() / 1000.0;
    }

    long groupId() {
        return g.groupId();
    }

    /** Logs a failure at most once per 30 s. */
    void warn(String what, Exception e) {
        long now = System.nanoTime();
        if (now - lastWarn > TimeUnit.SECONDS.toNanos(30)) {
            lastWarn = now;
            log.warn("{}: group={} error={}", what, g.groupName(), e.toString());
        }
    }
}
