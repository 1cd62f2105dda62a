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

    CliContext open() {
        return CliContext.open(globals(), false);
    }
}
