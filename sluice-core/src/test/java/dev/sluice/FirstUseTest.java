package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.testing.PgCatalog;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

/** Queues, locks and schedules install the control plane on first use, as stream registration does. */
@SluiceTest
class FirstUseTest {
    private static void assertCode(ErrorCode code, ThrowingCallable call) {
        assertThatThrownBy(call).isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(code));
    }

    private static long count(TestDatabase db, String schema, String table) {
        return new PgCatalog(db, schema).count("SELECT count(*) FROM \"" + schema + "\"." + table);
    }

    @Test
    void firstEnqueueInstallsTheControlPlaneAndTheJobRuns(TestDatabase db) {
        String schema = db.freshSchemaName("fresh_queue");
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(schema).build()) {
            long id = sluice.queue("emails", String.class).enqueue("hi");
            assertThat(id).isPositive();
            assertThat(new PgCatalog(db, schema).tables()).containsExactlyElementsOf(SystemRegistrationTest.CONTROL_PLANE);
            List<JobHandle<String>> claimed = sluice.queue("emails", String.class).claim(10);
            assertThat(claimed).extracting(JobHandle::id).containsExactly(id);
            assertThat(claimed.get(0).payload()).isEqualTo("hi");
            assertThat(claimed.get(0).ack()).isTrue();
            assertThat(count(db, schema, "job")).isZero();
            assertThat(sluice.system().get()).hasValueSatisfying(s -> assertThat(s.version()).isEqualTo(s.codeVersion()));
        }
    }

    @Test
    void firstLockAcquireInstallsTheControlPlane(TestDatabase db) {
        String schema = db.freshSchemaName("fresh_lock");
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(schema).build()) {
            Optional<LockHandle> held = sluice.lock("nightly").tryAcquire(Duration.ofSeconds(30));
            assertThat(held).isPresent();
            assertThat(held.get().fencingToken()).isEqualTo(1);
            assertThat(count(db, schema, "lock")).isEqualTo(1);
            assertThat(sluice.lock("nightly").tryAcquire(Duration.ofSeconds(30))).as("held").isEmpty();
        }
    }

    @Test
    void firstScheduleRegistrationInstallsTheControlPlane(TestDatabase db) {
        String schema = db.freshSchemaName("fresh_sched");
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(schema).build()) {
            ScheduleInfo info = sluice.schedule("tick").register(ScheduleSpec.every(Duration.ofMinutes(5)).toQueue("ticks")
                    .build());
            assertThat(info.name()).isEqualTo("tick");
            assertThat(count(db, schema, "schedule_config")).isEqualTo(1);
        }
    }

    @Test
    void aClientThatMayNotMigrateStillRefusesAMissingControlPlane(TestDatabase db) {
        String schema = db.freshSchemaName("no_migrate");
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(schema).migrate(false).build()) {
            assertCode(ErrorCode.SYSTEM_NOT_REGISTERED, () -> sluice.queue("jobs").enqueue("x".getBytes(StandardCharsets.UTF_8)));
            assertCode(ErrorCode.SYSTEM_NOT_REGISTERED, () -> sluice.lock("l").tryAcquire(Duration.ofSeconds(1)));
            assertThat(new PgCatalog(db, schema).count("SELECT count(*) FROM pg_namespace WHERE nspname = ?", schema))
                    .as("nothing was created").isZero();
        }
    }
}
