package dev.sluice.cli;

import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine;

/** Shared plumbing of the leaf commands: the global options, output streams and the client. */
abstract class Base implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    GlobalOptions globals() {
        return ((Main) spec.root().userObject()).globals;
    }

    PrintWriter out() {
        return spec.commandLine().getOut();
    }

    boolean json() {
        return globals().json();
    }

    /** The client of a one-shot command (maintenance off: it does not compete for the schema's manager). */
    CliContext open() {
        return CliContext.open(globals(), false);
    }

    /** The client of a long-running command (maintenance on: it competes for the manager like an application). */
    CliContext openServing() {
        return CliContext.open(globals(), false, true);
    }
}
