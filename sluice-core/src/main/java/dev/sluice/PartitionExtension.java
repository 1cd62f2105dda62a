package dev.sluice;

import java.util.List;

/**
 * What {@link Stream#extendPartitions(int)} did to a stream's log partitions.
 *
 * @param stream      the stream's name
 * @param created     the partitions created, in id order (table names, unqualified; empty when all existed)
 * @param headId      the highest id the stream had handed out when the partitions were checked
 * @param coveredUpTo the exclusive upper id bound of the partitions now: producers can write ids below it
 */
public record PartitionExtension(String stream, List<String> created, long headId, long coveredUpTo) {
    /** Copies {@code created}. */
    public PartitionExtension {
        created = List.copyOf(created);
    }
}
