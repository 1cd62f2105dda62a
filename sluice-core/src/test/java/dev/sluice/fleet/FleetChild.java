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
        Sluice sluice = Sluice.builder().dataSource(ds).schema(args[0]).clientId("child").fleetLease(Duration.ofMillis(Long.parseLong(args[3])))
                .maintenance(false).build();
        sluice.stream(args[1], String.class).consumerGroup(args[2]).consume(m -> Outcome.success());
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
