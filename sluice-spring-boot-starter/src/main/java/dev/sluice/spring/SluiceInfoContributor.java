package dev.sluice.spring;

import dev.sluice.MigrationStatus;
import dev.sluice.Sluice;
import java.io.IOException;
import java.io.InputStream;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.springframework.boot.actuate.info.Info;
import org.springframework.boot.actuate.info.InfoContributor;

/**
 * The {@code sluice} entry of the info endpoint: the library version, the schema, and each migration scope's
 * database and code versions (read through the bounded {@link SluiceProbe}; left out when the database does not
 * answer in time).
 */
public class SluiceInfoContributor implements InfoContributor {
    private final SluiceProbe probe;
    private final String schema;

    /** A contributor for the client {@code schema} reads through {@code probe}. */
    public SluiceInfoContributor(SluiceProbe probe, String schema) {
        this.probe = probe;
        this.schema = schema;
    }

    /** Adds the {@code sluice} entry. */
    @Override
    public void contribute(Info.Builder builder) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("version", version());
        m.put("schema", schema);
        try {
            List<MigrationStatus> status = probe.probe().migrations();
            Map<String, Object> versions = new LinkedHashMap<>();
            for (MigrationStatus s : status) {
                versions.put(s.scope().equals("system") ? "system" : "stream:" + s.name(),
                        Map.of("database", s.databaseVersion(), "code", s.codeVersion(), "state", s.state().name()));
            }
            m.put("schemaVersions", versions);
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            m.put("schemaVersions", "unavailable");
        }
        builder.withDetail("sluice", m);
    }

    /** The sluice-core version from its jar's Maven metadata ("development" when run from classes). */
    static String version() {
        try (InputStream in = Sluice.class.getResourceAsStream("/META-INF/maven/dev.sluice/sluice-core/pom.properties")) {
            if (in != null) {
                Properties p = new Properties();
                p.load(in);
                return p.getProperty("version", "development");
            }
        } catch (IOException e) {
            // fall through: the version is a nicety, never a reason to fail the endpoint
        }
        String v = Sluice.class.getPackage() == null ? null : Sluice.class.getPackage().getImplementationVersion();
        return v != null ? v : "development";
    }
}
