package dev.sluice.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import dev.sluice.bench.lab.Lab;
import dev.sluice.bench.lab.LabOptions;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code sluice bench lab}: the reliability lab (docs/reliability-lab.md). Exit 0 only on pass. */
@Command(name = "lab", description = {"The reliability lab: producers and consumers as separate processes under faults;",
        "a ledger and SQL checks classify every message. Exit 0 only on a pass verdict."})
final class LabCommand extends Base {
    @Option(names = "--duration", paramLabel = "DURATION", defaultValue = "60s", description = "How long producers run (default: ${DEFAULT-VALUE}).")
    String duration;

    @Option(names = "--drain-timeout", paramLabel = "DURATION", defaultValue = "3m", description = "Drain limit (default: ${DEFAULT-VALUE}).")
    String drainTimeout;

    @Option(names = "--producers", defaultValue = "1", description = "Producer processes (default: ${DEFAULT-VALUE}).")
    int producers;

    @Option(names = "--consumers", defaultValue = "3", description = "Consumer processes (default: ${DEFAULT-VALUE}).")
    int consumers;

    @Option(names = "--rate", defaultValue = "100", description = "Messages per second per producer (default: ${DEFAULT-VALUE}).")
    int rate;

    @Option(names = "--failure-rate", defaultValue = "0.05", description = "Share of first deliveries that fail (default: ${DEFAULT-VALUE}).")
    double failureRate;

    @Option(names = "--hang-rate", defaultValue = "0.01", description = "Share of first deliveries that hang past the lease (default: ${DEFAULT-VALUE}).")
    double hangRate;

    @Option(names = "--kill-every", paramLabel = "DURATION", defaultValue = "15s", description = "SIGKILL a consumer this often; 0 = off (default: ${DEFAULT-VALUE}).")
    String killEvery;

    @Option(names = "--terminate-every", paramLabel = "DURATION", defaultValue = "20s", description = "pg_terminate_backend lab connections this often; 0 = off (default: ${DEFAULT-VALUE}).")
    String terminateEvery;

    @Option(names = "--restart-at", paramLabel = "DURATION", defaultValue = "25s", description = "Restart the embedded PostgreSQL once at this point; 0 = off (default: ${DEFAULT-VALUE}).")
    String restartAt;

    @Option(names = "--pin-xmin-every", paramLabel = "DURATION", defaultValue = "14s", description = "This often an unrelated"
            + " transaction allocates an xid and holds it idle, no table touched; 0 = off (default: ${DEFAULT-VALUE}).")
    String pinXminEvery;

    @Option(names = "--pin-xmin-for", paramLabel = "DURATION", defaultValue = "8s", description = "How long each unrelated"
            + " transaction holds its xid: 2-3 leases, less than --pin-xmin-every (default: ${DEFAULT-VALUE}).")
    String pinXminFor;

    @Option(names = "--long-transactions", defaultValue = "0.1", description = "Share produced in long transactions (default: ${DEFAULT-VALUE}).")
    double longTransactions;

    @Option(names = "--lease", paramLabel = "DURATION", defaultValue = "3s", description = "Consumers' lease timeout (default: ${DEFAULT-VALUE}).")
    String lease;

    @Option(names = "--seed", defaultValue = "1", description = "Randomness of the run (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--engines", paramLabel = "LIST", defaultValue = "streams,queue,schedule,lock", split = ",",
            description = "The engines of the run, comma-separated, of streams, queue, schedule and lock; streams is always on"
                    + " (default: ${DEFAULT-VALUE}).")
    java.util.List<String> engines;

    @Option(names = "--job-rate", defaultValue = "50", description = "Per producer process, jobs enqueued per second"
            + " by the queue engine (default: ${DEFAULT-VALUE}).")
    int jobRate;

    @Option(names = "--keep-data", description = "Keep the embedded database (in the work directory) after a passing run too;"
            + " a run that does not pass always keeps it. The last line names it; open it with sluice db psql --data-dir DIR.")
    boolean keepData;

    @Option(names = "--class-archive", negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "Worker JVMs map a class archive recorded from the first consumer, so a consumer started at every"
                    + " kill loads its classes faster; --no-class-archive starts them without (default: on).")
    boolean classArchive;

    @Option(names = "--json", hidden = true, description = "Same as -o json: the summary as one JSON line.")
    boolean jsonFlag;

    private static Duration d(String s) {
        return s.equals("0") ? Duration.ZERO : Durations.parse(s);
    }

    @Override
    public Integer call() throws Exception {
        boolean json = jsonFlag || json();
        PrintWriter out = out();
        PrintWriter err = spec.commandLine().getErr();
        LabOptions options;
        try {
            options = new LabOptions(globals().effectiveDatabaseUrl(), Durations.parse(duration), Durations.parse(drainTimeout),
                    producers, consumers, rate, failureRate, hangRate, d(killEvery), d(terminateEvery),
                    globals().effectiveDatabaseUrl() == null ? d(restartAt) : Duration.ZERO, longTransactions, Durations.parse(lease), seed,
                    d(pinXminEvery), d(pinXminFor), java.util.Set.copyOf(engines), jobRate);
        } catch (IllegalArgumentException e) {
            throw new SluiceException(ErrorCode.INVALID_ARGUMENT, e.getMessage());
        }
        Lab.Result r = new Lab(options, line -> {
            err.println(line);
            err.flush();
        }).keepData(keepData).classArchive(classArchive).run();
        Map<String, Object> summary = r.summary(options);
        if (json) {
            out.println(new ObjectMapper().writeValueAsString(summary));
        } else {
            out.println("verdict:           " + r.verdict() + (r.reason() == null ? "" : " (" + r.reason() + ")"));
            summary.forEach((k, v) -> {
                if (!k.equals("verdict") && !k.equals("reason") && v != null) {
                    out.println(String.format("%-18s %s", k + ":", v));
                }
            });
        }
        out.flush();
        return "pass".equals(r.verdict()) ? Main.OK : Main.FAILURE;
    }
}
