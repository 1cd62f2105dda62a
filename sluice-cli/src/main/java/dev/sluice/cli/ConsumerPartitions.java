package dev.sluice.cli;

import dev.sluice.ConsumerGroup;
import dev.sluice.GroupInfo;
import dev.sluice.PartitionInfo;
import dev.sluice.server.json.StreamDocuments;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** The partitioned side of {@code sluice consumer}: the bucket table of {@code get}, and {@code repartition}. */
final class ConsumerPartitions {
    private ConsumerPartitions() {
    }

    /** A group as {@code consumer get} shows it: its fields, and for a partitioned group every bucket. */
    static void print(Base cmd, GroupInfo g, ConsumerGroup<?> group) {
        List<PartitionInfo> buckets = g.config().partitioned() ? group.partitions() : List.of();
        if (cmd.json()) {
            Map<String, Object> m = StreamDocuments.group(g);
            if (g.config().partitioned()) {
                m.put("buckets", buckets.stream().map(StreamDocuments::bucket).toList());
            }
            Output.json(cmd.out(), m);
            return;
        }
        Output.fields(cmd.out(), ConsumerCommand.fields(g));
        if (!buckets.isEmpty()) {
            Instant now = Instant.now();
            List<List<String>> rows = new ArrayList<>();
            for (PartitionInfo p : buckets) {
                boolean owned = p.ownedAt(now);
                rows.add(List.of(Integer.toString(p.bucket()), Long.toString(p.position()), Long.toString(p.lag()),
                        owned ? Long.toString(p.ownerInstanceId()) : "-", owned && p.holder() != null ? Terminal.echo(p.holder()) : "-",
                        owned ? p.leaseExpiresAt().toString() : "-"));
            }
            cmd.out().println();
            Output.table(cmd.out(), List.of("BUCKET", "POSITION", "LAG", "OWNER", "HOLDER", "LEASE_EXPIRES"), rows);
        }
    }

    @Command(name = "repartition", description = "Change a partitioned group's number of buckets. The group must be paused "
            + "('sluice fleet set-target consumer:STREAM/GROUP 0') and none of its consumers running; every new bucket starts "
            + "at the lowest old position, so messages between that and an old bucket's position are delivered again.")
    static final class Repartition extends Base {
        @Mixin
        ConsumerCommand.StreamGroup target;

        @Option(names = "--partitions", paramLabel = "N", required = true, description = "The new number of buckets (1 to 1024).")
        int partitions;

        @Override
        public Integer call() {
            try (CliContext ctx = open()) {
                ConsumerGroup<byte[]> g = ctx.sluice().stream(target.stream).consumerGroup(target.group);
                GroupInfo info = g.admin().repartition(partitions);
                print(this, info, g);
            }
            return Main.OK;
        }
    }
}
