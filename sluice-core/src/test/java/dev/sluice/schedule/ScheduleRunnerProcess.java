package dev.sluice.schedule;

import dev.sluice.ScheduleRunner;
import dev.sluice.Sluice;
import java.time.Duration;

/**
 * A separate OS process for {@link ScheduleProcessesTest}: runs a schedule runner against the given database
 * and schema for the given time, then prints {@code fires=<n>} and exits. Killing it mid-fire is part of the test.
 *
 * <p>Arguments: JDBC URL, schema, client id, run time in milliseconds.
 */
public final class ScheduleRunnerProcess {
    private ScheduleRunnerProcess() {
    }

    public static void main(String[] args) throws Exception {
        String url = args[0];
        String schema = args[1];
        String clientId = args[2];
        Duration runFor = Duration.ofMillis(Long.parseLong(args[3]));
        try (Sluice sluice = Sluice.builder().jdbcUrl(url).schema(schema).clientId(clientId).build();
             ScheduleRunner runner = sluice.runSchedules()) {
            System.out.println("started " + clientId);
            System.out.flush();
            Thread.sleep(runFor.toMillis());
            runner.close();
            System.out.println("fires=" + runner.fires());
            System.out.flush();
        }
    }
}
