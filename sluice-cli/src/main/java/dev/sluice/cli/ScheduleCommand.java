package dev.sluice.cli;

import dev.sluice.ErrorCode;
import dev.sluice.ScheduleFire;
import dev.sluice.ScheduleInfo;
import dev.sluice.ScheduleRunner;
import dev.sluice.ScheduleSpec;
import dev.sluice.SluiceException;
import dev.sluice.server.json.OpsDocuments;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "schedule", description = "Register, inspect, suspend, resume, run and destroy schedules; run a scheduler.",
        subcommands = {ScheduleCommand.ListSchedules.class, ScheduleCommand.Get.class, ScheduleCommand.Register.class,
                ScheduleCommand.Run.class, ScheduleCommand.Suspend.class, ScheduleCommand.Resume.class,
                ScheduleCommand.Destroy.class, ScheduleCommand.Serve.class})
final class ScheduleCommand {

    static void print(Base cmd, ScheduleInfo info) {
        if (cmd.json()) {
            Output.json(cmd.out(), OpsDocuments.schedule(info));
            return;
        }
        Map<String, Object> f = new LinkedHashMap<>();
        OpsDocuments.schedule(info).forEach((k, v) -> f.put(k, v == null ? "-" : v));
        Output.fields(cmd.out(), f);
    }

    @Command(name = "list", description = "List the schedules of the schema.")
    static final class ListSchedules extends Base {
        @Override
        public Integer call() {
            try (CliContext ctx = open()) {
                List<ScheduleInfo> all = ctx.sluice().schedules();
                if (json()) {
                    Output.json(out(), all.stream().map(OpsDocuments::schedule).toList());
                } else if (all.isEmpty()) {
                    out().println("no schedules in schema '" + globals().schema + "'");
                } else {
                    List<List<String>> rows = new ArrayList<>();
                    for (ScheduleInfo s : all) {
                        rows.add(List.of(s.name(), s.spec().expression(), s.spec().zone().getId(), s.spec().target().toString(),
                                s.suspended() ? "suspended" : "active", String.valueOf(s.nextDueAt()),
                                Long.toString(s.fires())));
                    }
                    Output.table(out(), List.of("NAME", "EXPRESSION", "ZONE", "TARGET", "STATE", "NEXT_DUE", "FIRES"), rows);
                }
            }
            return Main.OK;
        }
    }

    @Command(name = "get", description = "Show one schedule (exit 1 when it does not exist).")
    static final class Get extends Base {
        @Parameters(paramLabel = "NAME", description = "Schedule name.")
        String name;

        @Override
        public Integer call() {
            try (CliContext ctx = open()) {
                print(this, ctx.sluice().schedule(name).get().orElseThrow(() -> new SluiceException(
                        ErrorCode.SCHEDULE_NOT_FOUND, "schedule '" + name + "' does not exist")));
            }
            return Main.OK;
        }
    }

    @Command(name = "register", description = {"Create a schedule, or replace its spec (the whole spec: options not "
            + "given take their defaults; a changed expression or zone moves the next due time)."})
    static final class Register extends Base {
        @Parameters(paramLabel = "NAME", description = "Schedule name (^[a-z0-9][a-z0-9._-]{0,127}$).")
        String name;

        @ArgGroup(exclusive = true, multiplicity = "1")
        When when;

        static final class When {
            @Option(names = "--cron", paramLabel = "EXPR", description = "Cron: 5 fields, or 6 with seconds first; "
                    + "nicknames @hourly, @daily, @weekly, @monthly, @yearly.")
            String cron;

            @Option(names = "--every", paramLabel = "N{s|m|h|d}", description = "An interval, e.g. 30s, 5m, 1h, 1d.")
            String every;
        }

        @ArgGroup(exclusive = true, multiplicity = "1")
        Target target;

        static final class Target {
            @Option(names = "--stream", paramLabel = "STREAM", description = "Fire a message into this (existing) stream.")
            String stream;

            @Option(names = "--queue", paramLabel = "QUEUE", description = "Fire a job into this queue.")
            String queue;
        }

        @Option(names = "--zone", paramLabel = "ZONE", description = "Zone the cron fields are read in (default UTC).")
        String zone;

        @Option(names = "--data", paramLabel = "TEXT", description = "The payload of every fire (UTF-8; default empty).")
        String payload;

        /** The former name of --data, kept working (the same flag as 'stream produce --data'). */
        @Option(names = "--payload", paramLabel = "TEXT", hidden = true)
        void legacyPayload(String value) {
            payload = value;
        }

        @Option(names = "--content-type", paramLabel = "TYPE",
                description = "Content type of the payload (default text/plain; charset=utf-8 with --data).")
        String contentType;

        @Option(names = "--catch-up", paramLabel = "N",
                description = "After downtime fire up to N of the newest missed due times (default: only the newest).")
        Integer catchUp;

        @Override
        public Integer call() {
            ScheduleSpec.Builder b = ScheduleSpec.builder(when.cron != null ? when.cron : "@every " + when.every);
            if (zone != null) {
                b.zone(zone);
            }
            if (target.stream != null) {
                b.toStream(target.stream);
            } else {
                b.toQueue(target.queue);
            }
            if (payload != null) {
                b.payload(payload.getBytes(StandardCharsets.UTF_8), contentType != null ? contentType : "text/plain; charset=utf-8");
            } else if (contentType != null) {
                b.payload(new byte[0], contentType);
            }
            if (catchUp != null) {
                b.catchUp(catchUp);
            }
            ScheduleSpec spec = b.build();
            try (CliContext ctx = open()) {
                print(this, ctx.sluice().schedule(name).register(spec));
            }
            return Main.OK;
        }
    }

    @Command(name = "run", description = "Fire a schedule once now (its own key; also while suspended; no scheduler needed).")
    static final class Run extends Base {
        @Parameters(paramLabel = "NAME")
        String name;

        @Override
        public Integer call() {
            try (CliContext ctx = open()) {
                ScheduleFire f = ctx.sluice().schedule(name).runNow();
                if (json()) {
                    Output.json(out(), OpsDocuments.fire(f));
                } else {
                    out().println("fired schedule '" + name + "' into " + f.target() + ": id " + f.id() + ", key " + f.key());
                }
            }
            return Main.OK;
        }
    }

    @Command(name = "suspend", description = "Suspend a schedule: schedulers skip it until it is resumed.")
    static final class Suspend extends Base {
        @Parameters(paramLabel = "NAME")
        String name;

        @Override
        public Integer call() {
            try (CliContext ctx = open()) {
                print(this, ctx.sluice().schedule(name).suspend());
            }
            return Main.OK;
        }
    }

    @Command(name = "resume", description = "Resume a schedule; due times missed while suspended are dropped.")
    static final class Resume extends Base {
        @Parameters(paramLabel = "NAME")
        String name;

        @Override
        public Integer call() {
            try (CliContext ctx = open()) {
                print(this, ctx.sluice().schedule(name).resume());
            }
            return Main.OK;
        }
    }

    @Command(name = "destroy", description = "Delete a schedule (fires already made stay). Needs --yes.")
    static final class Destroy extends Base {
        @Parameters(paramLabel = "NAME")
        String name;

        @Option(names = "--yes", description = "Confirm.")
        boolean yes;

        @Override
        public Integer call() {
            if (!yes) {
                throw new Main.UsageException("destroying schedule '" + Terminal.echo(name) + "' cannot be undone; add --yes to confirm");
            }
            try (CliContext ctx = open()) {
                ctx.sluice().schedule(name).destroy();
            }
            if (json()) {
                Output.json(out(), Map.of("destroyed", name));
            } else {
                out().println("destroyed schedule '" + name + "'");
            }
            return Main.OK;
        }
    }

    @Command(name = "serve", description = {"Run a scheduler in the foreground until Ctrl-C (or --for elapses): fires "
            + "every due schedule of the schema. Run it in as many processes as you like; each due time fires once."})
    static final class Serve extends Base {
        @Option(names = "--for", paramLabel = "DURATION", description = "Stop after this long (e.g. 30s); default: until Ctrl-C.")
        String runFor;

        @Override
        public Integer call() throws InterruptedException {
            Duration limit = runFor == null ? null : Durations.parse(runFor);
            CountDownLatch stop = new CountDownLatch(1);
            CountDownLatch stopped = new CountDownLatch(1);
            // Ctrl-C: let the runner finish a fire in progress and the client close before the JVM exits.
            Thread hook = new Thread(() -> {
                stop.countDown();
                try {
                    stopped.await(15, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "sluice-schedule-serve-stop");
            Runtime.getRuntime().addShutdownHook(hook);
            long fires;
            try (CliContext ctx = openServing(); ScheduleRunner runner = ctx.sluice().runSchedules()) {
                if (!json()) {
                    out().println("running schedules of schema '" + globals().schema + "'"
                            + (limit == null ? " until Ctrl-C" : " for " + Durations.format(limit)));
                    out().flush();
                }
                if (limit == null) {
                    stop.await();
                } else {
                    stop.await(limit.toMillis(), TimeUnit.MILLISECONDS);
                }
                runner.close();
                fires = runner.fires();
            } finally {
                stopped.countDown();
                try {
                    Runtime.getRuntime().removeShutdownHook(hook);
                } catch (IllegalStateException shuttingDown) {
                    // the JVM is exiting (Ctrl-C): the hook already ran
                }
            }
            if (json()) {
                Output.json(out(), Map.of("fires", fires));
            } else {
                out().println("stopped after " + fires + " fires");
            }
            return Main.OK;
        }
    }
}
