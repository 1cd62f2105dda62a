package dev.sluice.cli;

import dev.sluice.SluiceException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * The {@code sluice} command. Exit codes: 0 ok, 1 failure (a coded error is printed), 2 usage.
 */
@Command(name = "sluice", mixinStandardHelpOptions = true, versionProvider = Main.Version.class,
        description = "PostgreSQL-native streams, queues and schedules for the JVM.",
        subcommands = {SystemCommand.class, StreamCommand.class, ConsumerCommand.class, QueueCommand.class, LockCommand.class, ScheduleCommand.class, DemoCommand.class, MigrateCommand.class, ExplainCommand.class,
                DbCommand.class,
                BenchCommand.class, CommandLine.HelpCommand.class})
public final class Main implements Runnable {
    /** Exit code for success. */
    public static final int OK = 0;
    /** Exit code for a failure (a coded error was printed). */
    public static final int FAILURE = 1;
    /** Exit code for a command line that could not be parsed. */
    public static final int USAGE = 2;

    @Mixin
    GlobalOptions globals = new GlobalOptions();

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    public static void main(String[] args) {
        PrintWriter out = new PrintWriter(System.out, true, StandardCharsets.UTF_8);
        PrintWriter err = new PrintWriter(System.err, true, StandardCharsets.UTF_8);
        System.exit(run(out, err, args));
    }

    /** Runs the command with the given streams; returns the exit code. */
    public static int run(PrintWriter out, PrintWriter err, String... args) {
        Main main = new Main();
        CommandLine cl = new CommandLine(main);
        cl.setOut(out);
        cl.setErr(err);
        cl.setParameterExceptionHandler((ex, a) -> {
            err.println("usage error: " + ex.getMessage());
            ex.getCommandLine().usage(err);
            return USAGE;
        });
        cl.setExecutionExceptionHandler((ex, commandLine, parseResult) -> {
            if (ex instanceof SluiceException se) {
                Output.error(out, err, main.globals.json(), se);
                return FAILURE;
            }
            if (ex instanceof UsageException ue) {
                err.println("usage error: " + ue.getMessage());
                return USAGE;
            }
            err.println("error: " + ex);
            ex.printStackTrace(err);
            return FAILURE;
        });
        int code = cl.execute(args);
        out.flush();
        err.flush();
        return code;
    }

    /** A command line that parses but is refused (for example destroy without --yes). */
    static final class UsageException extends RuntimeException {
        UsageException(String message) {
            super(message);
        }
    }

    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = Main.class.getPackage().getImplementationVersion();
            return new String[] {"sluice " + (v == null ? "development build" : v)};
        }
    }
}
