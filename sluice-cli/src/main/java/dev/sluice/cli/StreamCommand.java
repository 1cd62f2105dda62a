package dev.sluice.cli;

import dev.sluice.DeliveryLogMode;
import dev.sluice.ErrorCode;
import dev.sluice.PartitionExtension;
import dev.sluice.SluiceException;
import dev.sluice.StreamConfig;
import dev.sluice.StreamInfo;
import dev.sluice.server.json.StreamDocuments;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

@Command(name = "stream", description = "Register, inspect, rename and destroy streams.",
        subcommands = {StreamCommand.ListStreams.class, StreamCommand.Get.class, StreamCommand.Register.class,
                StreamCommand.Rename.class, StreamCommand.Destroy.class, StreamCommand.ExtendPartitions.class,
                StreamIo.Produce.class, StreamIo.Read.class})
final class StreamCommand {

    /** A retention for people: "forever", or the duration. */
    static String retention(java.time.Duration retention) {
        return Output.duration(retention);
    }

    static void print(Base cmd, StreamInfo info) {
        if (cmd.json()) {
            Output.json(cmd.out(), StreamDocuments.stream(info));
            return;
        }
        Map<String, Object> f = new LinkedHashMap<>();
        f.put("id", info.id());
        f.put("name", info.name());
        StreamConfig c = info.config();
        f.put("partition_size", c.partitionSize());
        // What the elected manager's janitor enforces (docs/maintenance.md).
        f.put("retention", retention(c.retention()));
        f.put("allow_drop_past_committed", c.allowDropPastCommitted());
        f.put("idempotency_key_ttl", Output.duration(c.idempotencyKeyTtl()));
        f.put("empty_compaction_head_ttl", Output.duration(c.emptyCompactionHeadTtl()));
        f.put("delivery_log_mode", c.deliveryLogMode().sqlValue());
        f.put("delivery_log_retention", Output.duration(c.deliveryLogRetention()));
        f.put("max_payload_bytes", c.maxPayloadBytes());
        f.put("family_version", info.familyVersion());
        f.put("tables", "message_log_" + info.id() + ", exception_queue_" + info.id() + ", ... (suffix " + info.id() + ")");
        f.put("created_at", info.createdAt());
        f.put("updated_at", info.updatedAt());
        Output.fields(cmd.out(), f);
    }

    @Command(name = "list", description = "List the streams of the schema.")
    static final class ListStreams extends Base {
        @Override
        public Integer call() {
            try (CliContext ctx = open()) {
                List<StreamInfo> streams = ctx.sluice().streams();
                if (json()) {
                    Output.json(out(), streams.stream().map(StreamDocuments::stream).toList());
                } else if (streams.isEmpty()) {
                    out().println("no streams in schema '" + globals().schema + "'");
                } else {
                    List<List<String>> rows = new ArrayList<>();
                    for (StreamInfo s : streams) {
                        rows.add(List.of(Long.toString(s.id()), s.name(), Long.toString(s.config().partitionSize()),
                                retention(s.config().retention()), s.config().deliveryLogMode().sqlValue(),
                                Integer.toString(s.familyVersion()), s.createdAt().toString()));
                    }
                    Output.table(out(), List.of("ID", "NAME", "PARTITION_SIZE", "RETENTION", "DELIVERY_LOG", "VERSION", "CREATED"), rows);
                }
            }
            return Main.OK;
        }
    }

    @Command(name = "get", description = "Show one stream (exit 1 when it does not exist).")
    static final class Get extends Base {
        @Parameters(paramLabel = "NAME", description = "Stream name.")
        String name;

        @Override
        public Integer call() {
            try (CliContext ctx = open()) {
                StreamInfo info = ctx.sluice().stream(name).get().orElseThrow(() -> new SluiceException(
                        ErrorCode.STREAM_NOT_FOUND, "stream '" + name + "' does not exist"));
                print(this, info);
            }
            return Main.OK;
        }
    }

    @Command(name = "register", description = {"Create a stream, or replace its configuration (the whole document: "
            + "options not given take their defaults)."})
    static final class Register extends Base {
        @Parameters(paramLabel = "NAME", description = "Stream name (^[a-z0-9][a-z0-9._-]{0,127}$).")
        String name;

        @Option(names = "--partition-size", paramLabel = "N", description = "Ids per log partition (default 1000000; fixed at creation).")
        Long partitionSize;

        @Option(names = "--retention", paramLabel = "DURATION", description = "Keep messages this long (e.g. 7d); default: "
                + "forever. The elected manager's janitor drops whole log partitions past it that every group has committed.")
        String retention;

        @Option(names = "--allow-drop-past-committed", description = "Let retention drop partitions a group has not committed.")
        boolean allowDropPastCommitted;

        @Option(names = "--idempotency-key-ttl", paramLabel = "DURATION", description = "Idempotency-key TTL (default 24h).")
        String idempotencyKeyTtl;

        @Option(names = "--empty-compaction-head-ttl", paramLabel = "DURATION", description = "TTL of an empty compaction "
                + "head (default 1h); the janitor deletes older ones.")
        String emptyCompactionHeadTtl;

        @Option(names = "--delivery-log", paramLabel = "MODE", description = "off, failures (default) or all.")
        String deliveryLog;

        @Option(names = "--delivery-log-retention", paramLabel = "DURATION", description = "Keep delivery-log events this "
                + "long (default 7d); the janitor deletes older ones.")
        String deliveryLogRetention;

        @Option(names = "--max-payload-bytes", paramLabel = "N", description = "Payload limit in bytes (default 1048576).")
        Integer maxPayloadBytes;

        @Override
        public Integer call() {
            StreamConfig.Builder b = StreamConfig.builder();
            if (partitionSize != null) {
                b.partitionSize(partitionSize);
            }
            if (retention != null && !retention.equalsIgnoreCase("forever")) {
                b.retention(Durations.parse(retention));
            }
            b.allowDropPastCommitted(allowDropPastCommitted);
            if (idempotencyKeyTtl != null) {
                b.idempotencyKeyTtl(Durations.parse(idempotencyKeyTtl));
            }
            if (emptyCompactionHeadTtl != null) {
                b.emptyCompactionHeadTtl(Durations.parse(emptyCompactionHeadTtl));
            }
            if (deliveryLog != null) {
                b.deliveryLogMode(DeliveryLogMode.parse(deliveryLog));
            }
            if (maxPayloadBytes != null) {
                b.maxPayloadBytes(maxPayloadBytes);
            }
            if (deliveryLogRetention != null) {
                b.deliveryLogRetention(Durations.parse(deliveryLogRetention));
            }
            StreamConfig config = b.build();
            try (CliContext ctx = open()) {
                print(this, ctx.sluice().stream(name).register(config));
            }
            return Main.OK;
        }
    }

    @Command(name = "rename", description = "Rename a stream (its id and tables stay).")
    static final class Rename extends Base {
        @Parameters(index = "0", paramLabel = "OLD")
        String from;

        @Parameters(index = "1", paramLabel = "NEW")
        String to;

        @Override
        public Integer call() {
            try (CliContext ctx = open()) {
                print(this, ctx.sluice().stream(from).rename(to));
            }
            return Main.OK;
        }
    }

    @Command(name = "destroy", description = "Drop a stream's tables and rows. Needs --yes; a stream with messages also needs --force.")
    static final class Destroy extends Base {
        @Parameters(paramLabel = "NAME")
        String name;

        @Option(names = "--force", description = "Destroy even when the stream holds messages.")
        boolean force;

        @Option(names = "--yes", description = "Confirm: this cannot be undone.")
        boolean yes;

        @Override
        public Integer call() {
            if (!yes) {
                throw new Main.UsageException("destroying stream '" + Terminal.echo(name) + "' cannot be undone; add --yes to confirm");
            }
            try (CliContext ctx = CliContext.open(globals(), true)) {
                ctx.sluice().stream(name).destroy(force);
            }
            if (json()) {
                Output.json(out(), Map.of("destroyed", name));
            } else {
                out().println("destroyed stream '" + name + "'");
            }
            return Main.OK;
        }
    }

    @Command(name = "extend-partitions", description = {"Create log partitions ahead of a stream's head (the highest "
            + "id handed out). Run it as a database user that may create tables in the schema, for producers whose "
            + "user may not (see docs/security.md, least-privilege roles). Idempotent."})
    static final class ExtendPartitions extends Base {
        @Parameters(paramLabel = "NAME", description = "Stream name.")
        String name;

        @Option(names = "--ahead", paramLabel = "N", defaultValue = "10",
                description = "Partitions to have ready past the head's, 1 to 10000 (default: ${DEFAULT-VALUE}).")
        int ahead;

        @Override
        public Integer call() {
            if (ahead < 1 || ahead > dev.sluice.Stream.MAX_PARTITIONS_AHEAD) {
                throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "--ahead must be between 1 and "
                        + dev.sluice.Stream.MAX_PARTITIONS_AHEAD + " (got " + ahead + ")");
            }
            PartitionExtension e;
            try (CliContext ctx = open()) {
                e = ctx.sluice().stream(name).extendPartitions(ahead);
            }
            if (json()) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("stream", e.stream());
                m.put("created", e.created());
                m.put("head_id", e.headId());
                m.put("covered_up_to", e.coveredUpTo());
                Output.json(out(), m);
                return Main.OK;
            }
            Map<String, Object> f = new LinkedHashMap<>();
            f.put("stream", e.stream());
            List<String> created = e.created();
            f.put("created", created.isEmpty() ? "0 (all existed)" : created.size() == 1 ? "1 (" + created.get(0) + ")"
                    : created.size() + " (" + created.get(0) + " .. " + created.get(created.size() - 1) + ")");
            f.put("head_id", e.headId());
            f.put("covered_up_to", e.coveredUpTo() + " (producers can write ids below it)");
            Output.fields(out(), f);
            return Main.OK;
        }
    }
}
