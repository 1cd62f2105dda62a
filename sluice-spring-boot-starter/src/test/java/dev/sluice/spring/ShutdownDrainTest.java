package dev.sluice.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.GroupInfo;
import dev.sluice.Sluice;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.context.event.EventListener;

/**
 * Closing the context drains the listeners: a handler in flight when the close starts finishes, its outcome is
 * committed before the client closes, and the message is neither lost nor delivered again.
 */
class ShutdownDrainTest {
    static final CountDownLatch entered = new CountDownLatch(1);
    static final CountDownLatch closing = new CountDownLatch(1);
    static final CountDownLatch release = new CountDownLatch(1);
    static final AtomicInteger calls = new AtomicInteger();
    static final AtomicInteger finished = new AtomicInteger();

    /** A listener that holds its message until the test lets it go. */
    static class Slow {
        @SluiceListener(stream = "drain", group = "slow")
        void handle(String text) throws InterruptedException {
            calls.incrementAndGet();
            entered.countDown();
            assertThat(release.await(30, TimeUnit.SECONDS)).isTrue();
            finished.incrementAndGet();
        }

        @EventListener
        void onClose(ContextClosedEvent e) {
            closing.countDown();
        }
    }

    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        @Bean
        Slow slow() {
            return new Slow();
        }
    }

    @Test
    void aHandlerInFlightFinishesAndItsMessageIsCommitted() throws Exception {
        String schema = TestDb.freshSchema("drain");
        ConfigurableApplicationContext ctx = new SpringApplicationBuilder(App.class)
                .properties(TestDb.properties(schema)).properties("sluice.maintenance.enabled=false").run();
        long id = ctx.getBean(Sluice.class).stream("drain", String.class).producer().produce("hold me").id();
        assertThat(entered.await(20, TimeUnit.SECONDS)).isTrue();

        Thread closer = new Thread(ctx::close, "test-closer");
        closer.start();
        assertThat(closing.await(10, TimeUnit.SECONDS)).isTrue();
        // The close is under way and waits for the handler: it has not finished.
        assertThat(closer.isAlive()).isTrue();
        release.countDown();
        closer.join(30_000);
        assertThat(closer.isAlive()).isFalse();
        assertThat(finished).hasValue(1);
        assertThat(calls).hasValue(1);

        // A fresh client sees the message committed: nothing in flight, ready or dead, so nothing is redelivered.
        try (Sluice check = Sluice.builder().jdbcUrl(TestDb.url()).schema(schema).maintenance(false).build()) {
            GroupInfo g = check.stream("drain").consumerGroup("slow").get().orElseThrow();
            assertThat(g.committed()).isGreaterThanOrEqualTo(id);
            assertThat(g.lag()).isZero();
            assertThat(g.inflight() + g.ready() + g.deferred() + g.dead()).isZero();
        }
    }
}
