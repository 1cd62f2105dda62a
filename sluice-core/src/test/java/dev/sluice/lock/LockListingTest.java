package dev.sluice.lock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.LockHandle;
import dev.sluice.LockInfo;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** {@link Sluice#locks()}: every lock row, held or not, with its owner, token and expiry. */
@SluiceTest
class LockListingTest {

    @Test
    void listsHeldReleasedAndExpiredLocksByName(TestDatabase db) {
        try (Sluice a = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).clientId("holder-a").build()) {
            assertThat(a.locks()).as("no control plane yet").isEmpty();
            a.system().register();
            assertThat(a.locks()).isEmpty();

            LockHandle held = a.lock("report").tryAcquire(Duration.ofMinutes(5)).orElseThrow();
            LockHandle released = a.lock("billing").tryAcquire(Duration.ofMinutes(5)).orElseThrow();
            released.release();
            a.lock("billing").tryAcquire(Duration.ofMinutes(5)).orElseThrow().release();
            a.lock("cleanup").tryAcquire(Duration.ofMinutes(5)).orElseThrow();
            db.execute("UPDATE \"" + db.schema() + "\".lock SET expires_at = now() - interval '1 second' WHERE name = 'cleanup'");

            assertThat(a.locks()).extracting(LockInfo::name).containsExactly("billing", "cleanup", "report");
            LockInfo billing = a.locks().get(0);
            assertThat(billing.held()).isFalse();
            assertThat(billing.owner()).as("a release clears the owner").isNull();
            assertThat(billing.fencingToken()).as("two acquisitions").isEqualTo(2);

            LockInfo cleanup = a.locks().get(1);
            assertThat(cleanup.held()).as("expired by the database clock").isFalse();
            assertThat(cleanup.owner()).as("an expiry keeps the last owner").isEqualTo("holder-a");

            LockInfo report = a.locks().get(2);
            assertThat(report.held()).isTrue();
            assertThat(report.owner()).isEqualTo("holder-a");
            assertThat(report.fencingToken()).isEqualTo(held.fencingToken());
            assertThat(report.expiresAt()).isEqualTo(held.expiresAt());
            assertThat(report.acquiredAt()).isBefore(report.expiresAt());

            held.release();
            assertThat(a.locks().get(2).held()).isFalse();
        }
    }
}
