package dev.sluice.tracing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.testing.ClassPathWithout;
import java.net.URLClassLoader;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
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
        try (URLClassLoader loader = new ClassPathWithout(List.of("/io/opentelemetry/"),
                List.of("io.opentelemetry.", "dev.sluice.internal.tracing.Otel"), asked)) {
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
}
