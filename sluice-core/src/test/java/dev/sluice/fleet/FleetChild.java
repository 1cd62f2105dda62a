package dev.sluice.fleet;

import dev.sluice.Outcome;
import dev.sluice.Sluice;
import java.time.Duration;
import org.postgresql.ds.PGSimpleDataSource;

/** A separate process for {@link KilledProcessTakeoverTest}: consumes a group until it is killed. */
public final class FleetChild {
    public static void main(String[] args) throws Exception {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(System.getenv("SLUICE_CHILD_URL")); // carries a password: from the environment, never the command line
        // With maintenance on and nobody else competing yet, the child is the schema's manager when the parent joins.
        Sluice sluice = Sluice.builder().dataSource(ds).schema(args[0]).clientId("child").fleetLease(Duration.ofMillis(Long.parseLong(args[3])))
                .maintenanceInterval(Duration.ofMillis(200)).maintenance(true).build();
        sluice.stream(args[1], String.class).consumerGroup(args[2]).consume(m -> Outcome.success());
        while (!sluice.maintenance().holding()) {
            Thread.sleep(20);
        }
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
