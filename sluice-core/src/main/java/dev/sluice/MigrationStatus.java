package dev.sluice;

/**
 * The migration state of one scope: the control plane of the schema, or one stream's family.
 *
 * @param scope           {@code system} or {@code stream}
 * @param name            the schema (system scope) or the stream's name
 * @param streamId        the stream id, or {@code null} for the system scope
 * @param databaseVersion the newest version recorded in {@code migration_log} (0 when not installed)
 * @param codeVersion     the newest version this code knows
 * @param state           how the two compare
 * @param problem         for {@link State#NEWER} and {@link State#CHECKSUM_MISMATCH}: what is wrong; else {@code null}
 */
public record MigrationStatus(String scope, String name, Long streamId, int databaseVersion, int codeVersion,
                              State state, String problem) {

    /** How the database compares with the code. */
    public enum State {
        /** The scope is not installed (the control plane of an empty schema). */
        NOT_INSTALLED,
        /** The database matches the code. */
        CURRENT,
        /** The database lacks steps the code has: run {@code sluice migrate up}. */
        PENDING,
        /** The database has steps the code does not know: upgrade the code. */
        NEWER,
        /** An applied step's checksum differs from the code's. */
        CHECKSUM_MISMATCH
    }
}
