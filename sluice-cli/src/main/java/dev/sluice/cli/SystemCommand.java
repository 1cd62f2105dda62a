package dev.sluice.cli;

import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import dev.sluice.SystemInfo;
import picocli.CommandLine.Command;

@Command(name = "system", description = "Install or inspect the control plane.",
        subcommands = {SystemCommand.Register.class, SystemCommand.Get.class})
final class SystemCommand {

    static void print(Base cmd, SystemInfo info) {
        if (cmd.json()) {
            Output.json(cmd.out(), Output.system(info));
        } else {
            Output.fields(cmd.out(), Output.system(info));
        }
    }

    @Command(name = "register", description = "Install the control plane (idempotent; migrates an older one).")
    static final class Register extends Base {
        @Override
        public Integer call() {
            try (CliContext ctx = open()) {
                print(this, ctx.sluice().system().register());
            }
            return Main.OK;
        }
    }

    @Command(name = "get", description = "Show the installed control plane (exit 1 when not installed).")
    static final class Get extends Base {
        @Override
        public Integer call() {
            try (CliContext ctx = open()) {
                SystemInfo info = ctx.sluice().system().get().orElseThrow(() -> new SluiceException(
                        ErrorCode.SYSTEM_NOT_REGISTERED, "schema '" + globals().schema + "' has no Sluice control plane"));
                print(this, info);
            }
            return Main.OK;
        }
    }
}
