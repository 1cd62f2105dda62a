package dev.sluice.lock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.LeaderListener;
import dev.sluice.Leadership;
import dev.sluice.LockHandle;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The examples of docs/locks.md, kept compiling and passing. */
@SluiceTest
class LockDocsExampleTest {

    @Test
    void locksPageExamplesRun(TestDatabase db) {
        List<String> written = new CopyOnWriteArrayList<>();
        List<String> janitor = new CopyOnWriteArrayList<>();
        try (Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build()) {
            sluice.system().register();

            Optional<LockHandle> held = sluice.lock("nightly-report").tryAcquire(Duration.ofMinutes(5));
            if (held.isPresent()) {
                try (LockHandle lock = held.get()) {
                    long token = lock.fencingToken();
                    for (String part : List.of("a", "b")) {
                        written.add(part + "@" + token);
                        if (!lock.renew(Duration.ofMinutes(5))) {
                            return;
                        }
                    }
                }
            }
            assertThat(written).containsExactly("a@1", "b@1");
            assertThat(sluice.lock("nightly-report").tryAcquire(Duration.ofMinutes(5))).as("released by close()")
                    .hasValueSatisfying(l -> assertThat(l.fencingToken()).isEqualTo(2));

            Leadership leadership = sluice.leader("janitor", Duration.ofSeconds(15), new LeaderListener() {
                @Override
                public void onElected(long fencingToken) {
                    janitor.add("start " + fencingToken);
                }

                @Override
                public void onRevoked() {
                    janitor.add("stop");
                }
            });
            await().atMost(Duration.ofSeconds(10)).until(leadership::isLeader);
            leadership.close();
            assertThat(leadership.isLeader()).isFalse();
        }
        assertThat(janitor).containsExactly("start 1", "stop");
    }
}
