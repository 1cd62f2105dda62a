package dev.sluice;

import java.time.Instant;

/**
 * A registered stream as stored in {@code stream_config}.
 *
 * @param id            the stream id; names the family tables ({@code message_log_<id>}, ...) and never changes
 * @param name          the current name
 * @param config        the current configuration (the newest declaration)
 * @param familyVersion the migration version of the stream's family of tables
 * @param createdAt     when the stream was first registered
 * @param updatedAt     when its row last changed (declaration or rename)
 */
public record StreamInfo(long id, String name, StreamConfig config, int familyVersion, Instant createdAt, Instant updatedAt) {
}
