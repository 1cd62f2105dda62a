package dev.sluice;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What one maintenance pass did ({@code sluice.maintenance().runOnce()}, or a pass of the elected manager).
 *
 * @param sweeps each sweep's result, in the order they ran
 * @param took   how long the whole pass ran
 */
public record MaintenanceReport(List<SweepResult> sweeps, Duration took) {

    public MaintenanceReport {
        sweeps = List.copyOf(sweeps);
        Objects.requireNonNull(took, "took");
    }

    /** The result of the sweep with this name, if it ran. */
    public Optional<SweepResult> sweep(String name) {
        return sweeps.stream().filter(s -> s.name().equals(name)).findFirst();
    }

    /** What the sweep with this name removed (0 when it did not run). */
    public long removed(String name) {
        return sweep(name).map(SweepResult::removed).orElse(0L);
    }

    /** Whether every sweep succeeded. */
    public boolean ok() {
        return sweeps.stream().allMatch(SweepResult::ok);
    }
}
