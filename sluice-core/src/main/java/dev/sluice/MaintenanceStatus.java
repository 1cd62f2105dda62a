package dev.sluice;

import java.util.List;
import java.util.Optional;

/**
 * Who runs the schema's maintenance and how its sweeps went ({@code sluice.maintenance().status()}).
 *
 * @param manager the active manager instance (its holder, since when, until when its lease runs), or empty when no
 *                client holds it (none runs with maintenance on, or the manager is paused with target 0)
 * @param paused  whether the manager worker's target is 0 (maintenance paused by an operator)
 * @param sweeps  the last run of each sweep, by name
 */
public record MaintenanceStatus(Optional<InstanceInfo> manager, boolean paused, List<SweepStatus> sweeps) {

    public MaintenanceStatus {
        sweeps = List.copyOf(sweeps);
    }
}
