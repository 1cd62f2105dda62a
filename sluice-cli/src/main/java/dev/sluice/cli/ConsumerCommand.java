package dev.sluice.cli;

import dev.sluice.ConcurrencyPolicy;
import dev.sluice.ConsumerGroup;
import dev.sluice.DeadLetter;
import dev.sluice.ErrorCode;
import dev.sluice.GroupConfig;
import dev.sluice.GroupInfo;
import dev.sluice.Page;
import dev.sluice.RetryPolicy;
import dev.sluice.SluiceException;
import dev.sluice.StartPosition;
import dev.sluice.server.json.Inputs;
import dev.sluice.server.json.StreamDocuments;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "consumer", description = "Consumer groups: list, inspect, register, dead letters, redrive, purge, rewind,"
        + " repartition.",
        subcommands = {ConsumerCommand.ListGroups.class, ConsumerCommand.Get.class, ConsumerCommand.Register.class,
                ConsumerCommand.Dead.class, ConsumerCommand.Redrive.class, ConsumerCommand.Purge.class,
                ConsumerCommand.Rewind.class, ConsumerPartitions.Repartition.class})
final class ConsumerCommand {

    /** The STREAM GROUP positional pair every per-group command takes. */
    static final class StreamGroup {
        @Parameters(index = "0", paramLabel = "STREAM")
        String stream;

        @Parameters(index = "1", paramLabel = "GROUP")
        String group;
    }

    /** {@link StreamDocuments#group} for people: durations as the flags take them ({@code 14d}). */
    static Map<String, Object> fields(GroupInfo g) {
        Map<String, Object> m = StreamDocuments.group(g);
        m.put("dead_letter_retention", Output.duration(g.config().deadLetterRetention()) + " (then the janitor deletes them)");
        return m;
    }

    @Command(name = "list", description = "Groups of a stream with cursor, lag and exception counts.")
    static final class ListGroups extends Base {
        @Parameters(paramLabel = "STREAM")
        String stream;

        @Override
        public Integer call() {
            try (CliContext ctx = open()) {
                List<GroupInfo> groups = ctx.sluice().stream(stream).consumerGroups();
                if (json()) {
                    Output.json(out(), groups.stream().map(StreamDocuments::group).toList());
                } else if (groups.isEmpty()) {
                    out().println("no consumer groups on stream '" + stream + "'");
                } else {
                    List<List<String>> rows = new ArrayList<>();
                    for (GroupInfo g : groups) {
                        rows.add(List.of(g.name(), Long.toString(g.committed()), Long.toString(g.claimed()), Long.toString(g.head()),
                                Long.toString(g.lag()), Long.toString(g.ready()), Long.toString(g.deferred()),
                                Long.toString(g.inflight()), Long.toString(g.dead()), Long.toString(g.openRanges())));
                    }
                    Output.table(out(), List.of("GROUP", "COMMITTED", "CLAIMED", "HEAD", "LAG", "READY", "DEFERRED",
                            "INFLIGHT", "DEAD", "RANGES"), rows);
                }
            }
            return Main.OK;
        }
    }

    @Command(name = "get", description = "One group (exit 1 when it does not exist).")
    static final class Get extends Base {
        @Mixin
        StreamGroup target;

        @Override
        public Integer call() {
            try (CliContext ctx = open()) {
                GroupInfo g = ctx.sluice().stream(target.stream).consumerGroup(target.group).get().orElseThrow(() -> new SluiceException(
                        ErrorCode.GROUP_NOT_FOUND, "consumer group '" + target.group + "' of stream '" + target.stream + "' does not exist"));
                ConsumerPartitions.print(this, g, ctx.sluice().stream(target.stream).consumerGroup(target.group));
            }
            return Main.OK;
        }
    }

    @Command(name = "register", description = "Create a group or replace its declaration (the whole document).")
    static final class Register extends Base {
        @Mixin
        StreamGroup target;

        @Option(names = "--start", paramLabel = "WHERE", defaultValue = "beginning",
                description = "beginning (default), head, an id, or an ISO-8601 time; read only at creation.")
        String start;

        @Option(names = "--binding", paramLabel = "PATTERN", description = "Routing pattern ('*' any run, '?' one character); repeatable.")
        List<String> bindings = new ArrayList<>();

        @Option(names = "--concurrency", paramLabel = "POLICY", description = "parallel (default), exclusive or ordered.")
        String concurrency;

        @Option(names = "--partitions", paramLabel = "N", description = "Consume bucket by bucket with N buckets (1 to 1024): "
                + "per-key order, each bucket owned by one consumer at a time. Fixed once the group exists (see 'consumer "
                + "repartition'). Implies ordered.")
        Integer partitions;

        @Option(names = "--max-attempts", paramLabel = "N", description = "Deliveries before a dead letter (default 5).")
        Integer maxAttempts;

        @Option(names = "--dead-letter-retention", paramLabel = "DURATION", description = "Keep dead letters this long after "
                + "they went dead (default 14d); then the elected manager's janitor deletes them. A dead letter keeps its "
                + "message from stream retention until then.")
        String deadLetterRetention;

        @Override
        public Integer call() {
            GroupConfig.Builder b = GroupConfig.builder().start(startPosition(start)).bindings(bindings);
            if (concurrency != null) {
                b.concurrency(ConcurrencyPolicy.parse(concurrency));
            }
            if (maxAttempts != null) {
                b.retry(RetryPolicy.DEFAULT.withMaxAttempts(maxAttempts));
            }
            if (partitions != null) {
                if (partitions < 1 || partitions > GroupConfig.MAX_PARTITIONS) {
                    throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "--partitions must be between 1 and "
                            + GroupConfig.MAX_PARTITIONS + " (got " + partitions + ")");
                }
                b.partitions(partitions);
            }
            if (deadLetterRetention != null) {
                b.deadLetterRetention(Durations.parse(deadLetterRetention));
            }
            GroupConfig config = b.build();
            try (CliContext ctx = open()) {
                ConsumerGroup<byte[]> handle = ctx.sluice().stream(target.stream).consumerGroup(target.group);
                ConsumerPartitions.print(this, handle.register(config), handle);
            }
            return Main.OK;
        }

        static StartPosition startPosition(String s) {
            if (s.isBlank()) {
                throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "--start is empty; use beginning, head, an id or an ISO-8601 time");
            }
            return Inputs.startPosition(s, t -> id("--start", t), ConsumerCommand::time);
        }
    }

    /** A message or job id given as text: digits that fit a 64-bit integer, else INVALID_ARGUMENT. */
    static long id(String flag, String s) {
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            throw new SluiceException(ErrorCode.INVALID_ARGUMENT, flag + " '" + Terminal.echo(s)
                    + "' is not an id (a whole number from 1 to " + Long.MAX_VALUE + ")");
        }
    }

    /** The latest time any time argument may name: what the library accepts as a job's run or expiry time. */
    static final Duration MAX_AHEAD = Duration.ofDays(3650);

    /** An ISO-8601 instant from year 1 up to 3650 days from now, else INVALID_ARGUMENT. */
    static Instant time(String s) {
        Instant t;
        try {
            t = Instant.parse(s.trim());
        } catch (DateTimeParseException e) {
            throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "'" + Terminal.echo(s)
                    + "' is not an ISO-8601 instant such as 2026-11-29T10:00:00Z");
        }
        if (t.isBefore(Instant.parse("0001-01-01T00:00:00Z")) || t.isAfter(Instant.now().plus(MAX_AHEAD))) {
            throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "'" + Terminal.echo(s)
                    + "' is out of range: times lie between year 1 and " + MAX_AHEAD.toDays() + " days from now");
        }
        return t;
    }

    @Command(name = "dead", description = "Dead letters of a group in message-id order, a page at a time.")
    static final class Dead extends Base {
        @Mixin
        StreamGroup target;

        @Option(names = "--limit", paramLabel = "N", defaultValue = "50", description = "Page size, 1 to 1000 (default: ${DEFAULT-VALUE}).")
        int limit;

        @Option(names = "--cursor", paramLabel = "CURSOR", description = "The 'next' cursor printed by the previous page.")
        String page;

        /** The former name of --cursor (as in 'queue dead'), kept working. */
        @Option(names = "--page", paramLabel = "CURSOR", hidden = true)
        void legacyCursor(String value) {
            page = value;
        }

        @Override
        public Integer call() {
            try (CliContext ctx = open()) {
                Page<DeadLetter> p = ctx.sluice().stream(target.stream).consumerGroup(target.group).admin().deadLetters(page, limit);
                if (json()) {
                    QueueCommand.page(out(), p.items().stream().map(StreamDocuments::deadLetter).toList(), p.next());
                } else if (p.items().isEmpty()) {
                    out().println("no dead letters");
                } else {
                    List<List<String>> rows = new ArrayList<>();
                    for (DeadLetter d : p.items()) {
                        String error = d.lastError() == null ? "" : d.lastError().replaceAll("\\s+", " ");
                        rows.add(List.of(Long.toString(d.messageId()), d.messageKey() == null ? "-" : d.messageKey(),
                                Integer.toString(d.attempts()), String.valueOf(d.deadAt()),
                                error.length() > 80 ? error.substring(0, 80) + "..." : error));
                    }
                    Output.table(out(), List.of("MESSAGE", "KEY", "ATTEMPTS", "DEAD_AT", "LAST_ERROR"), rows);
                    if (p.next() != null) {
                        out().println("next page: --cursor " + p.next());
                    }
                }
            }
            return Main.OK;
        }
    }

    /** Redrive and purge: which dead letters, as message ids after STREAM GROUP (as 'queue redrive' takes job ids), or --all. */
    abstract static class DeadLetterAction extends Base {
        @Mixin
        StreamGroup target;

        @Parameters(index = "2..*", arity = "0..*", paramLabel = "MESSAGE_ID", description = "Message ids of dead letters.")
        List<Long> ids = new ArrayList<>();

        /** The former form of the ids ({@code --id 1,2 --id 3}), kept working. */
        @Option(names = "--id", paramLabel = "MESSAGE_ID", split = ",", hidden = true)
        List<Long> legacyIds = new ArrayList<>();

        @Option(names = "--all", description = "Every dead letter of the group.")
        boolean all;

        /** The named ids (empty with --all); a usage error when both or neither are given. */
        List<Long> chosen(String verb) {
            List<Long> named = new ArrayList<>(ids);
            named.addAll(legacyIds);
            if (all == !named.isEmpty()) {
                throw new Main.UsageException("name the dead letters to " + verb + " by message id, or pass --all (not both)");
            }
            return named;
        }
    }

    @Command(name = "redrive", description = "Put dead letters back to ready with attempts reset.")
    static final class Redrive extends DeadLetterAction {
        @Override
        public Integer call() {
            List<Long> named = chosen("redrive");
            try (CliContext ctx = open()) {
                ConsumerGroup<byte[]> g = ctx.sluice().stream(target.stream).consumerGroup(target.group);
                int n = all ? g.admin().redriveAll() : g.admin().redrive(named);
                report(this, "redriven", n);
            }
            return Main.OK;
        }
    }

    @Command(name = "purge", description = "Delete dead letters (the messages stay in the log). Needs --yes.")
    static final class Purge extends DeadLetterAction {
        @Option(names = "--yes", description = "Confirm: purged dead letters cannot be redriven.")
        boolean yes;

        @Override
        public Integer call() {
            List<Long> named = chosen("purge");
            if (!yes) {
                throw new Main.UsageException("purging dead letters cannot be undone; add --yes to confirm");
            }
            try (CliContext ctx = open()) {
                ConsumerGroup<byte[]> g = ctx.sluice().stream(target.stream).consumerGroup(target.group);
                int n = all ? g.admin().purgeAll() : g.admin().purge(named);
                report(this, "purged", n);
            }
            return Main.OK;
        }
    }

    static void report(Base cmd, String what, int n) {
        if (cmd.json()) {
            Output.json(cmd.out(), Map.of(what, n));
        } else {
            cmd.out().println(what + " " + n + " dead letter" + (n == 1 ? "" : "s"));
        }
    }

    static final class Target {
        @Option(names = "--to-id", paramLabel = "ID", description = "Resume delivery at this message id.")
        Long id;

        @Option(names = "--to-time", paramLabel = "TIME", description = "Resume at the first message produced at or after this ISO-8601 time.")
        String time;
    }

    @Command(name = "rewind", description = "Move a group's cursor; refused while consumers are live unless --force.")
    static final class Rewind extends Base {
        @Mixin
        StreamGroup target;

        @ArgGroup(exclusive = true, multiplicity = "1")
        Target to;

        @Option(names = "--force", description = "Rewind even while consumers of the group are live.")
        boolean force;

        @Override
        public Integer call() {
            try (CliContext ctx = open()) {
                ConsumerGroup<byte[]> g = ctx.sluice().stream(target.stream).consumerGroup(target.group);
                GroupInfo info = to.id != null ? g.admin().rewindToId(to.id, force) : g.admin().rewindToTime(time(to.time), force);
                if (json()) {
                    Output.json(out(), StreamDocuments.group(info));
                } else {
                    out().println("group '" + target.group + "' now resumes after id " + info.committed());
                }
            }
            return Main.OK;
        }
    }
}
