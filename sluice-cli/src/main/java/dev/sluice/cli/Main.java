package dev.sluice.cli;

import dev.sluice.SluiceException;
import dev.sluice.internal.jdbc.DatabaseUrls;
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
        subcommands = {SystemCommand.class, StreamCommand.class, ConsumerCommand.class, QueueCommand.class, LockCommand.class, TokenCommand.class, ScheduleCommand.class, DemoCommand.class, ServeCommand.class, MigrateCommand.class, ExplainCommand.class,
                DbCommand.class, FleetCommand.class, MaintenanceCommand.class,
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
    public static int run(PrintWriter rawOut, PrintWriter rawErr, String... args) {
        // Everything printed passes one escaping rule, whatever the command prints (see Terminal).
        PrintWriter out = Terminal.escaping(rawOut);
        PrintWriter err = Terminal.escaping(rawErr);
        Main main = new Main();
        CommandLine cl = commandLine(main, out, err);
        int code = cl.execute(args);
        out.flush();
        err.flush();
        return code;
    }

    /** The command tree of {@code main} printing to {@code out} and {@code err}, with the error handling. */
    static CommandLine commandLine(Main main, PrintWriter out, PrintWriter err) {
        CommandLine cl = new CommandLine(main);
        answerHelpEverywhere(cl);
        // No ANSI styles in the help: output escapes control characters, which would show them as text.
        cl.setColorScheme(CommandLine.Help.defaultColorScheme(CommandLine.Help.Ansi.OFF));
        cl.setOut(out);
        cl.setErr(err);
        cl.setParameterExceptionHandler((ex, a) -> {
            err.println("usage error: " + Terminal.message(ex.getMessage()));
            ex.getCommandLine().usage(err);
            return USAGE;
        });
        cl.setExecutionExceptionHandler((ex, commandLine, parseResult) -> {
            String url = main.globals.rawDatabaseUrl();
            if (ex instanceof SluiceException se) {
                Output.error(out, err, main.globals.json(), se, url);
                if (main.globals.debug()) {
                    printStackTrace(err, se, url);
                }
                return FAILURE;
            }
            if (ex instanceof UsageException ue) {
                err.println("usage error: " + ue.getMessage());
                return USAGE;
            }
            // Not a coded error: one line, the password scrubbed; the stack trace only with --debug.
            err.println("error: " + Terminal.message(DatabaseUrls.scrub(String.valueOf(ex), url))
                    + (main.globals.debug() ? "" : " (run with --debug or SLUICE_DEBUG=1 for the stack trace)"));
            if (main.globals.debug()) {
                printStackTrace(err, ex, url);
            }
            return FAILURE;
        });
        return cl;
    }

    private static void printStackTrace(PrintWriter err, Throwable ex, String url) {
        java.io.StringWriter trace = new java.io.StringWriter();
        ex.printStackTrace(new PrintWriter(trace));
        err.print(DatabaseUrls.scrub(trace.toString(), url));
        err.flush();
    }

    /**
     * Gives every command and subcommand {@code -h/--help} unless it declares its own help option: a command
     * added later answers {@code --help} without remembering to.
     */
    private static void answerHelpEverywhere(CommandLine cl) {
        CommandLine.Model.CommandSpec spec = cl.getCommandSpec();
        if (spec.optionsMap().get("--help") == null) {
            spec.addOption(CommandLine.Model.OptionSpec.builder("-h", "--help").usageHelp(true)
                    .description("Show this help message and exit.").build());
        }
        cl.getSubcommands().values().forEach(Main::answerHelpEverywhere);
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
