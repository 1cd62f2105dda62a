package dev.sluice.internal.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.internal.jdbc.Db;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import org.junit.jupiter.api.Test;

@SluiceTest
class MigratorLockTest {

    @Test
    void aHeldSchemaLockTimesOutWithACodedRetryableError(TestDatabase db) throws Exception {
        Migrator migrator = new Migrator(db.schema(), "test").lockTimeout(Duration.ofMillis(200));
        try (Connection holder = db.connect()) {
            holder.setAutoCommit(false);
            new Migrator(db.schema(), "holder").lockSchema(holder);

            assertThatThrownBy(() -> new Db(db.dataSource()).transaction("probe", c -> {
                migrator.lockSchema(c);
                return null;
            })).isInstanceOfSatisfying(SluiceException.class, e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.MIGRATION_LOCK_TIMEOUT);
                assertThat(e.retryable()).isTrue();
            });
            holder.rollback();
        }
        // Released: the lock is free again, and it is scoped to the schema (another schema never waited).
        int held = new Db(db.dataSource()).transaction("probe", c -> {
            migrator.lockSchema(c);
            try (PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()")) {
                var rs = ps.executeQuery();
                rs.next();
                return rs.getInt(1);
            }
        });
        assertThat(held).isEqualTo(1);
    }

    @Test
    void stepsAreNumberedWithoutGapsAndChecksumsAreStable() {
        SchemaSteps steps = SchemaSteps.RELEASED;
        assertThat(steps.system()).extracting(MigrationStep::stepName).startsWith("V001__control_plane");
        assertThat(steps.stream()).extracting(MigrationStep::stepName).startsWith("V001__family");
        MigrationStep again = MigrationStep.load(Scope.SYSTEM, 1, "control_plane");
        assertThat(again.checksum()).isEqualTo(steps.system().get(0).checksum()).hasSize(64);
        assertThat(steps.stream().get(0).render("\"s\"", 42)).contains("\"s\".message_log_42").doesNotContain("{id}", "{schema}");
    }
}
