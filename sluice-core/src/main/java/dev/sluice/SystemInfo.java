package dev.sluice;

import java.time.Instant;

/**
 * The installed control plane of one schema.
 *
 * @param id          the {@code system_config} id
 * @param name        the system's name ({@code default})
 * @param schema      the database schema of this installation
 * @param version     the control plane's migration version in the database
 * @param codeVersion the newest control-plane version this code knows
 * @param createdAt   when the control plane was installed
 */
public record SystemInfo(long id, String name, String schema, int version, int codeVersion, Instant createdAt) {
}
