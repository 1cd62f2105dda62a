package dev.sluice.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.MetricsAccess;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.io.File;
import java.io.IOException;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import org.junit.jupiter.api.Test;

/**
 * Without a registry nothing is measured and nothing breaks: a client runs in a class loader that has no Micrometer on
 * its class path, and never even asks for a Micrometer class (nor for Sluice's own Micrometer meters).
 */
@SluiceTest
class NoRegistryTest {
    @Test
    void aClientWithoutARegistryWorksWithoutMicrometerOnTheClassPathAndNeverLoadsIt(TestDatabase db) throws Exception {
        List<String> asked = new CopyOnWriteArrayList<>();
        try (URLClassLoader loader = new URLClassLoader(classPathWithoutMicrometer(), ClassLoader.getPlatformClassLoader()) {
            @Override
            protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
                if (name.startsWith("io.micrometer.") || name.startsWith("dev.sluice.internal.metrics.Micrometer")) {
                    asked.add(name);
                }
                return super.loadClass(name, resolve);
            }
        }) {
            Class<?> scenario = loader.loadClass(WithoutMicrometer.class.getName());
            assertThat(scenario.getClassLoader()).isSameAs(loader); // not the test's own copy
            Object handled = scenario.getMethod("run", String.class, String.class).invoke(null, db.jdbcUrl(),
                    db.freshSchemaName("nomicrometer"));
            assertThat(handled).isEqualTo("3/1");
            assertThat(asked).as("classes asked for by a client without a registry").isEmpty();
            // The loader really has no Micrometer: a client that did need it would have failed above.
            assertThatThrownBy(() -> loader.loadClass("io.micrometer.core.instrument.MeterRegistry"))
                    .isInstanceOf(ClassNotFoundException.class);
        }
    }

    @Test
    void aClientWithoutARegistryRunsNoRefresh(TestDatabase db) {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).maintenance(false).build()) {
            assertThat(MetricsAccess.refreshes(sluice)).isFalse();
            sluice.stream("n.s").register();
            assertThat(sluice.stream("n.s").producer().produce(new byte[] {1}).id()).isPositive();
        }
    }

    /** This test JVM's class path (a manifest-only booter jar expanded) without Micrometer's jars and theirs. */
    private static URL[] classPathWithoutMicrometer() throws IOException {
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

    private static void add(List<URL> out, URL url) throws MalformedURLException {
        String s = url.toString();
        if (!s.contains("/io/micrometer/") && !s.contains("/io/prometheus/") && !s.contains("/org/hdrhistogram/")
                && !s.contains("/org/latencyutils/")) {
            out.add(url);
        }
    }
}
