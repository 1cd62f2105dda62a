package dev.sluice.lock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.ErrorCode;
import dev.sluice.LeaderListener;
import dev.sluice.LockHandle;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.testing.CountingDataSource;
import dev.sluice.testing.PgCatalog;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** TTL locks: fencing tokens across holders and takeovers, stale holders, renewal, races, bad input. */
@SluiceTest
class LockTest {
    static Sluice a;
    static Sluice b;
    static PgCatalog cat;
    static String q;

    @BeforeAll
    static void setUp(TestDatabase db) {
        a = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).clientId("holder-a").build();
        b = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).clientId("holder-b").build();
        a.system().register();
        cat = new PgCatalog(db, db.schema());
        q = "\"" + db.schema() + "\"";
    }

    @AfterAll
    static void tearDown() {
        a.close();
        b.close();
    }

    /** Makes the lock look expired, as if its TTL had passed without a renewal. */
    static void expire(TestDatabase db, String name) {
        db.execute("UPDATE " + q + ".lock SET expires_at = now() - interval '1 millisecond' WHERE name = '" + name + "'");
    }

    static List<String> row(String name) {
        return cat.strings("SELECT concat_ws('|', owner, token, fencing_token, acquired_at, expires_at) FROM " + q
                + ".lock WHERE name = ?", name);
    }

    @Test
    void fencingTokensStrictlyIncreaseAcrossHoldersReleasesAndTakeovers(TestDatabase db) {
        LockHandle first = a.lock("report").tryAcquire(Duration.ofMinutes(1)).orElseThrow();
        assertThat(first.fencingToken()).isEqualTo(1);
        assertThat(first.owner()).isEqualTo("holder-a");
        assertThat(b.lock("report").tryAcquire(Duration.ofMinutes(1))).as("held").isEmpty();
        assertThat(a.lock("report").tryAcquire(Duration.ofMinutes(1))).as("held, also for its own client").isEmpty();

        assertThat(first.release()).isTrue();
        LockHandle second = b.lock("report").tryAcquire(Duration.ofMinutes(1)).orElseThrow();
        assertThat(second.fencingToken()).isEqualTo(2);

        expire(db, "report");
        LockHandle third = a.lock("report").tryAcquire(Duration.ofMinutes(1)).orElseThrow();
        assertThat(third.fencingToken()).as("a takeover of an expired lock also increments").isEqualTo(3);
        third.close();

        long previous = third.fencingToken();
        for (int i = 0; i < 5; i++) {
            try (LockHandle h = (i % 2 == 0 ? a : b).lock("report").tryAcquire(Duration.ofSeconds(30)).orElseThrow()) {
                assertThat(h.fencingToken()).isGreaterThan(previous);
                previous = h.fencingToken();
            }
        }
        assertThat(a.lock("other").tryAcquire(Duration.ofSeconds(5)).orElseThrow().fencingToken())
                .as("tokens count per name").isEqualTo(1);
        assertThat(cat.count("SELECT count(*) FROM " + q + ".lock WHERE name = 'report'")).isEqualTo(1);
    }

    @Test
    void aStaleHoldersRenewAndReleaseFailAndChangeNothing(TestDatabase db) {
        LockHandle stale = a.lock("stale").tryAcquire(Duration.ofSeconds(30)).orElseThrow();
        expire(db, "stale");
        List<String> expired = row("stale");
        assertThat(stale.renew(Duration.ofSeconds(30))).as("expired, even if nobody took it yet").isFalse();
        assertThat(stale.release()).isFalse();
        assertThat(row("stale")).isEqualTo(expired);

        LockHandle current = b.lock("stale").tryAcquire(Duration.ofSeconds(30)).orElseThrow();
        List<String> taken = row("stale");
        assertThat(stale.renew(Duration.ofSeconds(30))).isFalse();
        assertThat(stale.release()).isFalse();
        stale.close();
        assertThat(row("stale")).as("the new holder's row is untouched").isEqualTo(taken);
        assertThat(current.fencingToken()).isGreaterThan(stale.fencingToken());

        assertThat(current.release()).isTrue();
        assertThat(current.release()).as("released: lost").isFalse();
        assertThat(current.renew(Duration.ofSeconds(1))).isFalse();
    }

    @Test
    void renewRestartsTheWindowFromNow() {
        LockHandle h = a.lock("renew").tryAcquire(Duration.ofSeconds(2)).orElseThrow();
        var before = h.expiresAt();
        assertThat(h.renew(Duration.ofMinutes(10))).isTrue();
        assertThat(h.expiresAt()).isAfter(before.plusSeconds(500));
        assertThat(cat.strings("SELECT extract(epoch FROM expires_at - updated_at) FROM " + q + ".lock WHERE name = 'renew'"))
                .containsExactly("600.000000");
        assertThat(h.renew(Duration.ofSeconds(1))).as("a shorter window is allowed too").isTrue();
        h.close();
    }

    @Test
    void concurrentAcquirersGetExactlyOneHolder() throws Exception {
        for (int round = 0; round < 5; round++) {
            String name = "race-" + round;
            int racers = 8;
            CyclicBarrier start = new CyclicBarrier(racers);
            ExecutorService pool = Executors.newFixedThreadPool(racers);
            try {
                List<Future<Optional<LockHandle>>> results = new ArrayList<>();
                for (int i = 0; i < racers; i++) {
                    Sluice client = i % 2 == 0 ? a : b;
                    results.add(pool.submit(() -> {
                        start.await(10, TimeUnit.SECONDS);
                        return client.lock(name).tryAcquire(Duration.ofSeconds(30));
                    }));
                }
                int winners = 0;
                for (Future<Optional<LockHandle>> f : results) {
                    Optional<LockHandle> got = f.get(30, TimeUnit.SECONDS);
                    if (got.isPresent()) {
                        winners++;
                        assertThat(got.get().fencingToken()).isEqualTo(1);
                    }
                }
                assertThat(winners).as(name).isEqualTo(1);
            } finally {
                pool.shutdownNow();
            }
        }
    }

    @Test
    void badNamesAndTtlsAreRejectedBeforeAnyRoundTrip(TestDatabase db) {
        CountingDataSource ds = new CountingDataSource(db.dataSource());
        LeaderListener listener = new LeaderListener() {
            @Override
            public void onElected(long fencingToken) {
            }

            @Override
            public void onRevoked() {
            }
        };
        try (Sluice counted = Sluice.builder().dataSource(ds).schema(db.schema()).build()) {
            assertCode(ErrorCode.INVALID_NAME, () -> counted.lock("No Such Name").tryAcquire(Duration.ofSeconds(1)));
            assertCode(ErrorCode.INVALID_LOCK_OPTIONS, () -> counted.lock("l").tryAcquire(Duration.ZERO));
            assertCode(ErrorCode.INVALID_LOCK_OPTIONS, () -> counted.lock("l").tryAcquire(Duration.ofSeconds(-5)));
            assertCode(ErrorCode.INVALID_LOCK_OPTIONS, () -> counted.lock("l").tryAcquire(Duration.ofDays(31)));
            assertCode(ErrorCode.INVALID_LOCK_OPTIONS, () -> counted.leader("l", Duration.ofMillis(100), listener));
            assertCode(ErrorCode.INVALID_NAME, () -> counted.leader("", Duration.ofSeconds(1), listener));
            assertThat(ds.opened()).isZero();
        }
        LockHandle h = a.lock("ttl-check").tryAcquire(Duration.ofSeconds(5)).orElseThrow();
        assertCode(ErrorCode.INVALID_LOCK_OPTIONS, () -> h.renew(Duration.ZERO));
        assertThat(h.release()).isTrue();
        assertThat(cat.count("SELECT count(*) FROM " + q + ".lock WHERE name = 'l'")).isZero();
    }

    static void assertCode(ErrorCode code, ThrowingCallable call) {
        assertThatThrownBy(call).isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(code));
    }
}
