package dev.sluice.internal.consume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.sluice.ConsumeOptions;
import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.Outcome;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A consumer's close gives unfinished work back, but a database that does not answer (here: the test
 * holds the range lease's row lock) must not hang it: the releases stop at {@link GroupConsumer#RELEASE_LIMIT}
 * and what is left expires with its lease.
 */
@SluiceTest
class BoundedConsumerCloseTest {

    @Test
    void closeReturnsWithinItsBoundWhileTheRangeLeaseIsLocked(TestDatabase db) throws Exception {
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build();
             Connection blocker = db.connect()) {
            long sid = sluice.stream("stuck-close").register().id();
            ConsumerGroup<String> group = sluice.stream("stuck-close", String.class).consumerGroup("g");
            group.register();
            sluice.stream("stuck-close", String.class).producer().produce("m");
            CountDownLatch running = new CountDownLatch(1);
            CountDownLatch finish = new CountDownLatch(1);
            Consumption c = group.consume(m -> {
                running.countDown();
                finish.await();
                return Outcome.success();
            }, ConsumeOptions.defaults().withShutdownTimeout(Duration.ofMillis(200)));
            try {
                assertThat(running.await(20, TimeUnit.SECONDS)).isTrue();
                blocker.setAutoCommit(false);
                String lease = "\"" + db.schema() + "\".claim_lease_" + sid;
                try (PreparedStatement ps = blocker.prepareStatement("SELECT id FROM " + lease + " FOR UPDATE")) {
                    ps.executeQuery().close();
                }
                long started = System.nanoTime();
                assertTimeoutPreemptively(Duration.ofSeconds(40), c::close);
                assertThat(Duration.ofNanos(System.nanoTime() - started))
                        .isLessThan(GroupConsumer.RELEASE_LIMIT.plusSeconds(8));
                assertThat(c.running()).isFalse();
                blocker.rollback();
                // Not released (the release timed out): the range stays leased until its lease expires.
                try (Connection check = db.connect(); PreparedStatement ps = check.prepareStatement(
                        "SELECT count(*) FROM " + lease + " WHERE NOT released AND expires_at > now()");
                     ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    assertThat(rs.getLong(1)).isEqualTo(1);
                }
            } finally {
                finish.countDown();
                blocker.rollback();
            }
        }
    }
}
