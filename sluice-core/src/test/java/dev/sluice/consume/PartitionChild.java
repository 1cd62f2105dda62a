package dev.sluice.consume;

import dev.sluice.ConsumeOptions;
import dev.sluice.Consumption;
import dev.sluice.Outcome;
import dev.sluice.Sluice;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A separate process for {@link PartitionFailoverTest}: a member of a partitioned group that prints every delivery
 * ({@code START id key} before its handler's work, {@code DONE id} after) and holds each for a while, until it is
 * killed. Arguments: schema, stream, group, fleet lease (ms), handler time (ms).
 */
public final class PartitionChild {
    public static void main(String[] args) throws Exception {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(System.getenv("SLUICE_CHILD_URL")); // carries a password: from the environment, never the command line
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        long work = Long.parseLong(args[4]);
        Sluice sluice = Sluice.builder().dataSource(ds).schema(args[0]).clientId("child")
                .fleetLease(Duration.ofMillis(Long.parseLong(args[3]))).maintenance(false).build();
        Consumption c = sluice.stream(args[1], String.class).consumerGroup(args[2]).consume(m -> {
            synchronized (out) {
                out.println("START " + m.id() + " " + m.messageKey());
            }
            Thread.sleep(work);
            synchronized (out) {
                out.println("DONE " + m.id());
            }
            return Outcome.success();
        }, ConsumeOptions.defaults().withPollInterval(Duration.ofMillis(20)).withBatchSize(20).withConcurrency(4));
        out.println("READY");
        Thread.sleep(Long.MAX_VALUE);
        c.close();
    }
}
