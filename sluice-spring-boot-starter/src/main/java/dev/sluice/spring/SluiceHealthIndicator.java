package dev.sluice.spring;

import dev.sluice.MetricSnapshot;
import dev.sluice.MigrationStatus;
import dev.sluice.SluiceException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;

/**
 * The {@code sluice} health indicator.
 * <ul>
 *   <li>DOWN: the database does not answer within {@code sluice.health.timeout}, the schema is newer than this code or
 *   tampered with (NEWER, CHECKSUM_MISMATCH), or a listener's consumption or worker stopped while the context runs.</li>
 *   <li>OUT_OF_SERVICE: the schema lacks migrations (PENDING) or is not installed, and {@code sluice.auto-migrate} is
 *   off: nothing this instance does is wrong, but it cannot work until an operator runs {@code sluice migrate up}.
 *   With auto-migrate on, both are UP with the state as a detail (the next registration installs or migrates).</li>
 *   <li>{@link #DEGRADED}: a consumer group's lag (from the manager's newest metric snapshots) is above
 *   {@code sluice.health.lag-threshold}.</li>
 *   <li>UP otherwise.</li>
 * </ul>
 * Details: the schema, its control-plane version, the running listeners and the groups over the threshold. No
 * password or URL is shown: errors are reported by their Sluice code or exception class.
 */
public class SluiceHealthIndicator implements HealthIndicator {
    /** A group lags behind more than the threshold: working, but falling behind. */
    public static final Status DEGRADED = new Status("DEGRADED", "a consumer group's lag is above sluice.health.lag-threshold");

    private final SluiceProbe probe;
    private final SluiceListenerContainer listeners;
    private final SluiceProperties properties;
    private final String schema;

    /**
     * An indicator over {@code probe} and the {@code listeners} (null when there is no container) of the client of
     * {@code schema}.
     */
    public SluiceHealthIndicator(SluiceProbe probe, SluiceListenerContainer listeners, SluiceProperties properties, String schema) {
        this.probe = probe;
        this.listeners = listeners;
        this.properties = properties;
        this.schema = schema;
    }

    /** Probes the database (bounded) and the listeners; see the class documentation for the statuses. */
    @Override
    public Health health() {
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("schema", schema);
        Map<String, Boolean> status = listeners == null ? Map.of() : listeners.status();
        details.put("listeners", status);
        // Listed before the database is asked, so a failed probe still names them.
        List<String> stopped = listeners == null || !listeners.started() ? List.of()
                : status.entrySet().stream().filter(en -> !en.getValue()).map(Map.Entry::getKey).toList();
        if (!stopped.isEmpty()) {
            details.put("stoppedListeners", stopped);
        }
        final SluiceProbe.Result r;
        try {
            r = probe.probe();
        } catch (TimeoutException e) {
            return Health.down().withDetails(details).withDetail("error", "the database did not answer within "
                    + properties.getHealth().getTimeout()).build();
        } catch (ExecutionException e) {
            return Health.down().withDetails(details).withDetail("error", describe(e.getCause())).build();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Health.unknown().withDetails(details).build();
        }
        Status result = Status.UP;
        for (MigrationStatus m : r.migrations()) {
            if (m.scope().equals("system")) {
                details.put("schemaVersion", m.databaseVersion());
                details.put("codeVersion", m.codeVersion());
                details.put("schemaState", m.state().name());
            }
            switch (m.state()) {
                case NEWER, CHECKSUM_MISMATCH -> {
                    result = Status.DOWN;
                    details.put("migrationProblem", m.scope() + " " + m.name() + ": " + m.state());
                }
                case PENDING, NOT_INSTALLED -> {
                    // With auto-migrate the next registration installs or migrates; without it the client refuses
                    // to work (SLU-0200 and kin) until an operator migrates: out of service, not broken.
                    if (!properties.isAutoMigrate() && result != Status.DOWN) {
                        result = Status.OUT_OF_SERVICE;
                    }
                    if (m.state() == MigrationStatus.State.PENDING) {
                        details.put("migrationsPending", true);
                    }
                }
                default -> {
                }
            }
        }
        if (!stopped.isEmpty()) {
            result = Status.DOWN;
        }
        Map<String, Long> lagging = new LinkedHashMap<>();
        long threshold = properties.getHealth().getLagThreshold();
        for (MetricSnapshot s : r.metrics()) {
            if ("group".equals(s.kind()) && s.lag() != null && s.lag() > threshold) {
                lagging.put(s.name(), s.lag());
            }
        }
        if (!lagging.isEmpty()) {
            details.put("lagThreshold", threshold);
            details.put("groupsOverLagThreshold", lagging);
            if (result == Status.UP) {
                result = DEGRADED;
            }
        }
        return Health.status(result).withDetails(details).build();
    }

    /** What went wrong, without the text of driver errors (which can name hosts and users). */
    private static String describe(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof SluiceException se) {
                return se.code().code() + " " + se.code().title();
            }
        }
        return t == null ? "unknown" : t.getClass().getName();
    }
}
