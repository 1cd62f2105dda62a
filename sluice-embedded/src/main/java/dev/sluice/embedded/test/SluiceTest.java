package dev.sluice.embedded.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Runs a JUnit 5 test class against a real PostgreSQL: one embedded server per test JVM (or the
 * server named by the environment variable {@code SLUICE_TEST_DATABASE_URL}), and a fresh, empty
 * schema for every test class, dropped after the class.
 *
 * <p>Declare a {@link TestDatabase} parameter on a constructor, a lifecycle method or a test method
 * to receive the class's database and schema.
 *
 * <pre>{@code
 * @SluiceTest
 * class MyTest {
 *     @Test void works(TestDatabase db) {
 *         Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build();
 *     }
 * }
 * }</pre>
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(SluiceTestExtension.class)
public @interface SluiceTest {
}
