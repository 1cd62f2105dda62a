package dev.sluice.tracing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.io.File;
import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import org.junit.jupiter.api.Test;

/**
 * Without {@code openTelemetry(...)} nothing is traced and nothing breaks: a client runs in a class loader that has no
 * OpenTelemetry on its class path, and never even asks for an OpenTelemetry class (nor for Sluice's own OpenTelemetry
 * tracing). The same construction as the metrics' NoRegistryTest.
 */
@SluiceTest
class NoOpenTelemetryTest {
    @Test
    void aClientWithoutOpenTelemetryWorksWithoutItOnTheClassPathAndNeverLoadsIt(TestDatabase db) throws Exception {
        List<String> asked = new CopyOnWriteArrayList<>();
        try (URLClassLoader loader = new URLClassLoader(classPathWithoutOpenTelemetry(), ClassLoader.getPlatformClassLoader()) {
            @Override
            protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
                if (name.startsWith("io.opentelemetry.") || name.startsWith("dev.sluice.internal.tracing.Otel")) {
                    asked.add(name);
                }
                return super.loadClass(name, resolve);
            }
        }) {
            Class<?> scenario = loader.loadClass(WithoutOpenTelemetry.class.getName());
            assertThat(scenario.getClassLoader()).isSameAs(loader); // not the test's own copy
            Object handled = scenario.getMethod("run", String.class, String.class).invoke(null, db.jdbcUrl(),
                    db.freshSchemaName("nootel"));
            // The headers as given: nothing added without tracing.
            assertThat(handled).isEqualTo("2/1 {tenant=acme}");
            assertThat(asked).as("classes asked for by a client without OpenTelemetry").isEmpty();
            // The loader really has no OpenTelemetry: a client that did need it would have failed above.
            assertThatThrownBy(() -> loader.loadClass("io.opentelemetry.api.OpenTelemetry"))
                    .isInstanceOf(ClassNotFoundException.class);
        }
    }

    /** This test JVM's class path (a manifest-only booter jar expanded) without OpenTelemetry's jars. */
    private static URL[] classPathWithoutOpenTelemetry() throws IOException {
        List<URL> out = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (entry.isEmpty()) {
                continue;
            }
            File f = new File(entry);
            add(out, f.toURI().toURL());
            if (f.isFile() && f.getName().endsWith(".jar")) {
                try (JarFile jar = new JarFile(f)) {
                    Manifest m = jar.getManifest();
                    String more = m == null ? null : m.getMainAttributes().getValue("Class-Path");
                    if (more != null) {
                        for (String e : more.trim().split("\\s+")) {
                            add(out, new URL(f.toURI().toURL(), e));
                        }
                    }
                }
            }
        }
        return out.toArray(URL[]::new);
    }

    private static void add(List<URL> out, URL url) {
        if (!url.toString().contains("/io/opentelemetry/")) {
            out.add(url);
        }
    }
}
