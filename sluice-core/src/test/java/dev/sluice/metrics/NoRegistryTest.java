package dev.sluice.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.MetricsAccess;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.testing.ClassPathWithout;
import java.net.URLClassLoader;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
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
        try (URLClassLoader loader = new ClassPathWithout(
                List.of("/io/micrometer/", "/io/prometheus/", "/org/hdrhistogram/", "/org/latencyutils/"), List.of("io.micrometer.", "dev.sluice.internal.metrics.Micrometer"), asked)) {
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
}
