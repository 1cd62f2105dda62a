package dev.sluice.schedule;

import dev.sluice.ScheduleRunner;
import dev.sluice.Sluice;
import java.time.Duration;

/**
 * A separate OS process for {@link ScheduleProcessesTest}: runs a schedule runner against the given database
 * and schema for the given time, then prints {@code fires=<n>} and exits. Killing it mid-fire is part of the test.
 *
 * <p>Arguments: schema, client id, run time in milliseconds. The JDBC URL (it carries the embedded
 * server's password) comes in the environment variable {@value #URL_VARIABLE}, not on the command
 * line, where every local user could read it.
 */
public final class ScheduleRunnerProcess {
    /** The environment variable that carries the JDBC URL. */
    public static final String URL_VARIABLE = "SLUICE_TEST_CHILD_DATABASE_URL";

    private ScheduleRunnerProcess() {
    }

    public static void main(String[] args) throws Exception {
        String url = System.getenv(URL_VARIABLE);
        String schema = args[0];
        String clientId = args[1];
        Duration runFor = Duration.ofMillis(Long.parseLong(args[2]));
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
