package dev.sluice.internal.schema;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * One released migration step: an SQL template with {@code {schema}} (and for families {@code {id}})
 * placeholders. The checksum is the SHA-256 of the template, so it does not depend on the schema or
 * stream it is applied to. Released steps are append-only: never edit one, add the next version.
 */
public record MigrationStep(Scope scope, int version, String name, String template, String checksum) {

    static MigrationStep load(Scope scope, int version, String name) {
        String resource = scope.sqlValue() + "/" + String.format("V%03d__%s.sql", version, name);
        try (InputStream in = MigrationStep.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("missing migration resource " + resource);
            }
            String template = new String(in.readAllBytes(), StandardCharsets.UTF_8).replace("\r\n", "\n");
            return new MigrationStep(scope, version, name, template, sha256(template));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The step's SQL for one schema (quoted) and, for family steps, one stream id. */
    public String render(String quotedSchema, long streamId) {
        return template.replace("{schema}", quotedSchema).replace("{id}", Long.toString(streamId));
    }

    /** The statement of the first control-plane step that creates the installation schema when it is missing. */
    static final String CREATE_SCHEMA = "CREATE SCHEMA IF NOT EXISTS {schema};\n";

    /**
     * The step's SQL for a schema that exists already: without {@link #CREATE_SCHEMA}, which PostgreSQL refuses
     * without CREATE on the database even when the schema is there, so a migration role that owns a schema an
     * administrator created for it could not run it. The checksum stays the template's.
     */
    public String renderInExistingSchema(String quotedSchema, long streamId) {
        return template.replace(CREATE_SCHEMA, "").replace("{schema}", quotedSchema).replace("{id}", Long.toString(streamId));
    }

    /** The name recorded in the ledger, e.g. {@code V001__control_plane}. */
    public String stepName() {
        return String.format("V%03d__%s", version, name);
    }

    static String sha256(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
