package dev.sluice.spring;

import dev.sluice.embedded.test.SluiceTestExtension;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.test.context.DynamicPropertyRegistry;

/** The test JVM's one embedded PostgreSQL (the sluice-embedded test kit's) and a fresh schema per test class. */
final class TestDb {
    private static final AtomicInteger SEQ = new AtomicInteger();

    private TestDb() {
    }

    /** The shared server's JDBC URL (it carries the password: never print it). */
    static String url() {
        return SluiceTestExtension.serverUrl();
    }

    /** A schema name no other test class of this run uses. */
    static String freshSchema(String hint) {
        return "boot_" + hint + "_" + ProcessHandle.current().pid() + "_" + SEQ.incrementAndGet();
    }

    /** Points the context at the shared server and at a fresh schema; returns the schema. */
    static String register(DynamicPropertyRegistry registry, String hint) {
        String schema = freshSchema(hint);
        registry.add("spring.datasource.url", TestDb::url);
        registry.add("sluice.schema", () -> schema);
        return schema;
    }

    /** The same as property strings for an ApplicationContextRunner. */
    static String[] properties(String schema) {
        return new String[] {"spring.datasource.url=" + url(), "sluice.schema=" + schema};
    }
}
