package dev.sluice.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.sluice.ConsumerGroup;
import dev.sluice.Consumption;
import dev.sluice.ErrorCode;
import dev.sluice.InstanceInfo;
import dev.sluice.InstanceState;
import dev.sluice.Outcome;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import dev.sluice.Stream;
import dev.sluice.StreamConfig;
import dev.sluice.WorkerInfo;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Worker instances: claim, one heartbeat statement per process, release, targets that pause, cap and resume. */
@SluiceTest
class FleetTest {
    static final Duration LEASE = Duration.ofMillis(900);

    static Sluice client(TestDatabase db, String id) {
        return Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).clientId(id).fleetLease(LEASE)
                .maintenance(false).build();
    }

    static long scalar(TestDatabase db, String sql, Object... args) {
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                ps.setObject(i + 1, args[i]);
            }
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getLong(1) : -1;
            }
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    static List<long[]> rows(TestDatabase db, String sql) {
        List<long[]> out = new ArrayList<>();
        try (Connection c = db.connect(); PreparedStatement ps = c.prepareStatement(sql); ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                out.add(new long[] {rs.getLong(1), rs.getLong(2)});
            }
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
        return out;
    }

    static ConsumerGroup<String> group(Sluice sluice, String stream, String group) {
        Stream<String> s = sluice.stream(stream, String.class);
        s.register(StreamConfig.defaults());
        ConsumerGroup<String> g = s.consumerGroup(group);
        g.register();
        return g;
    }

    private static InstanceInfo only(Sluice sluice, String worker) {
        List<InstanceInfo> mine = sluice.fleet().instances().stream().filter(i -> i.worker().equals(worker)).toList();
        assertThat(mine).hasSize(1);
        return mine.get(0);
    }

    @Test
    void aConsumptionClaimsAnInstanceRenewsItAndDeletesItOnClose(TestDatabase db) {
        try (Sluice sluice = client(db, "proc-a")) {
            ConsumerGroup<String> g = group(sluice, "fleet.basic", "billing");
            String key = "consumer:fleet.basic/billing";
            assertThat(sluice.fleet().worker(key).live()).isZero();
            try (Consumption c = g.consume(m -> Outcome.success())) {
                InstanceInfo i = only(sluice, key);
                assertThat(i.holder()).isEqualTo("proc-a");
                assertThat(i.state()).isEqualTo(InstanceState.ACTIVE);
                assertThat(sluice.fleet().worker(key)).satisfies(w -> {
                    assertThat(w.targetInstances()).isEqualTo(-1);
                    assertThat(w.live()).isEqualTo(1);
                    assertThat(w.active()).isEqualTo(1);
                });
                // Renewed by the heartbeat: expiry moves, a snapshot per claim and renewal.
                await().atMost(Duration.ofSeconds(10)).until(() -> scalar(db,
                        "SELECT count(*) FROM " + db.schema() + ".worker_instance_log WHERE instance_id = ?", i.id()) >= 3);
                assertThat(only(sluice, key).expiresAt()).isAfter(i.expiresAt());
                assertThat(only(sluice, key).id()).isEqualTo(i.id());
            }
            // A clean close deletes the live row at once; its snapshots stay.
            assertThat(sluice.fleet().instances()).noneMatch(x -> x.worker().equals(key));
            assertThat(scalar(db, "SELECT count(*) FROM " + db.schema() + ".worker_instance_log")).isGreaterThanOrEqualTo(3);
        }
    }

    @Test
    void oneHeartbeatStatementRenewsEveryInstanceOfTheProcess(TestDatabase db) {
        int groups = 12;
        try (Sluice sluice = client(db, "proc-beat")) {
            List<Consumption> running = new ArrayList<>();
            try {
                for (int k = 0; k < groups; k++) {
                    running.add(group(sluice, "fleet.beat", "g" + k).consume(m -> Outcome.success()));
                }
                // Renewals from a little after the last claim (a beat that had gathered its tokens just before it may renew
                // the others only): every renewal transaction (same now()) snapshots all 12 instances.
                String after = "(SELECT max(instance_created_at) + interval '500 milliseconds' FROM " + db.schema()
                        + ".worker_instance_log)";
                await().atMost(Duration.ofSeconds(10)).until(() -> rows(db, "SELECT extract(epoch FROM logged_at)::int8, count(*) FROM "
                        + db.schema() + ".worker_instance_log WHERE logged_at > " + after + " GROUP BY logged_at").size() >= 3);
                List<long[]> beats = rows(db, "SELECT extract(epoch FROM logged_at)::int8, count(*) FROM " + db.schema()
                        + ".worker_instance_log WHERE logged_at > " + after + " GROUP BY logged_at");
                assertThat(beats).allSatisfy(b -> assertThat(b[1]).as("instances renewed by one statement").isEqualTo(groups));
            } finally {
                running.forEach(Consumption::close);
            }
        }
    }

    @Test
    void targetZeroPausesAConsumptionWithinAHeartbeatAndMinusOneResumesIt(TestDatabase db) throws Exception {
        try (Sluice sluice = client(db, "proc-pause")) {
            ConsumerGroup<String> g = group(sluice, "fleet.pause", "billing");
            String key = "consumer:fleet.pause/billing";
            Set<String> seen = ConcurrentHashMap.newKeySet();
            try (Consumption c = g.consume(m -> {
                seen.add(m.payload());
                return Outcome.success();
            }); Producer<String> p = sluice.stream("fleet.pause", String.class).producer()) {
                p.produce("before");
                await().atMost(Duration.ofSeconds(10)).until(() -> seen.contains("before"));

                WorkerInfo paused = sluice.fleet().setTarget(key, 0);
                assertThat(paused.targetInstances()).isZero();
                assertThat(paused.paused()).isTrue();
                await().atMost(Duration.ofSeconds(5)).until(() -> only(sluice, key).state() == InstanceState.PAUSED);
                // The consumption's own gate shuts at its process's next heartbeat (notified at once).
                Thread.sleep(LEASE.toMillis());
                p.produce("while-paused");
                Thread.sleep(1_500); // a paused consumption claims nothing however long it waits
                assertThat(seen).doesNotContain("while-paused");

                sluice.fleet().setTarget(key, -1);
                await().atMost(Duration.ofSeconds(10)).until(() -> seen.contains("while-paused"));
                assertThat(only(sluice, key).state()).isEqualTo(InstanceState.ACTIVE);
            }
        }
    }

    @Test
    void targetZeroPausesAQueueWorkerAndMinusOneResumesIt(TestDatabase db) throws Exception {
        try (Sluice sluice = client(db, "proc-qpause")) {
            dev.sluice.Queue<String> q = sluice.queue("fleet.jobs", String.class);
            q.enqueue("before");
            Set<String> done = ConcurrentHashMap.newKeySet();
            try (dev.sluice.Worker w = q.work(job -> done.add(job.payload()))) {
                await().atMost(Duration.ofSeconds(10)).until(() -> done.contains("before"));
                sluice.fleet().setTarget("queue:fleet.jobs", 0);
                await().atMost(Duration.ofSeconds(5)).until(() -> only(sluice, "queue:fleet.jobs").state() == InstanceState.PAUSED);
                Thread.sleep(LEASE.toMillis()); // the worker's own gate follows at its process's next heartbeat
                q.enqueue("while-paused");
                Thread.sleep(1_500);
                assertThat(done).doesNotContain("while-paused");
                assertThat(q.admin().stats().pending()).isEqualTo(1);
                sluice.fleet().setTarget("queue:fleet.jobs", -1);
                await().atMost(Duration.ofSeconds(10)).until(() -> done.contains("while-paused"));
            }
        }
    }

    @Test
    void targetOneKeepsASecondProcessAsStandbyThatTakesOverWhenTheFirstLeaves(TestDatabase db) {
        try (Sluice a = client(db, "proc-one"); Sluice b = client(db, "proc-two")) {
            ConsumerGroup<String> ga = group(a, "fleet.cap", "billing");
            ConsumerGroup<String> gb = b.stream("fleet.cap", String.class).consumerGroup("billing");
            String key = "consumer:fleet.cap/billing";
            a.fleet().setTarget(key, 1);
            AtomicInteger byA = new AtomicInteger();
            AtomicInteger byB = new AtomicInteger();
            Consumption ca = ga.consume(m -> {
                byA.incrementAndGet();
                return Outcome.success();
            });
            try (Consumption cb = gb.consume(m -> {
                byB.incrementAndGet();
                return Outcome.success();
            }); Producer<String> p = a.stream("fleet.cap", String.class).producer()) {
                List<InstanceInfo> both = a.fleet().instances().stream().filter(i -> i.worker().equals(key)).toList();
                assertThat(both).extracting(InstanceInfo::state).containsExactly(InstanceState.ACTIVE, InstanceState.STANDBY);
                assertThat(both).extracting(InstanceInfo::holder).containsExactly("proc-one", "proc-two");
                assertThat(a.fleet().worker(key)).satisfies(w -> {
                    assertThat(w.live()).isEqualTo(2);
                    assertThat(w.active()).isEqualTo(1);
                });
                for (int i = 0; i < 20; i++) {
                    p.produce("m" + i);
                }
                await().atMost(Duration.ofSeconds(10)).until(() -> byA.get() == 20);
                assertThat(byB.get()).isZero();

                ca.close(); // its row goes at once and the standby is notified
                await().atMost(Duration.ofSeconds(5)).until(() -> only(b, key).state() == InstanceState.ACTIVE);
                for (int i = 20; i < 30; i++) {
                    p.produce("m" + i);
                }
                await().atMost(Duration.ofSeconds(10)).until(() -> byB.get() == 10);
                assertThat(byA.get()).isEqualTo(20);
            } finally {
                ca.close();
            }
        }
    }

    @Test
    void aWorkerCreatedAtTheSameMomentByAnotherProcessIsFoundNotRefused(TestDatabase db) throws Exception {
        try (Sluice sluice = client(db, "proc-race")) {
            sluice.queue("race").enqueue(new byte[] {1}); // installs the control plane
            // Another process is creating the queue's worker and has not committed yet.
            try (Connection other = db.connect()) {
                other.setAutoCommit(false);
                try (PreparedStatement ps = other.prepareStatement("INSERT INTO " + db.schema() + ".worker_config (name,"
                        + " system_id, target_instances) SELECT 'queue:race', id, -1 FROM " + db.schema() + ".system_config")) {
                    ps.executeUpdate();
                }
                java.util.concurrent.CompletableFuture<dev.sluice.Worker> started = java.util.concurrent.CompletableFuture
                        .supplyAsync(() -> sluice.queue("race").work(job -> { }));
                // Our claim waits on the other's uncommitted row (the unique key), then must find it once it commits.
                await().atMost(Duration.ofSeconds(5)).until(() -> scalar(db, "SELECT count(*) FROM pg_stat_activity"
                        + " WHERE wait_event_type = 'Lock' AND datname = current_database()") >= 1);
                other.commit();
                try (dev.sluice.Worker w = started.get(10, java.util.concurrent.TimeUnit.SECONDS)) {
                    assertThat(w.running()).isTrue();
                    assertThat(only(sluice, "queue:race").state()).isEqualTo(InstanceState.ACTIVE);
                }
            }
        }
    }

    @Test
    void badTargetsAndUnknownWorkersAreCodedAndChangeNothing(TestDatabase db) {
        try (Sluice sluice = client(db, "proc-bad")) {
            group(sluice, "fleet.bad", "billing");
            String key = "consumer:fleet.bad/billing";
            assertThatThrownBy(() -> sluice.fleet().setTarget(key, -2)).isInstanceOfSatisfying(SluiceException.class,
                    e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
            assertThatThrownBy(() -> sluice.fleet().setTarget(key, 10_001)).isInstanceOfSatisfying(SluiceException.class,
                    e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
            assertThatThrownBy(() -> sluice.fleet().setTarget("manager", 2)).isInstanceOfSatisfying(SluiceException.class,
                    e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT));
            assertThatThrownBy(() -> sluice.fleet().setTarget("consumer:fleet.bad/nobody", 0))
                    .isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.WORKER_NOT_FOUND));
            assertThatThrownBy(() -> sluice.fleet().worker("queue:never-ran")).isInstanceOfSatisfying(SluiceException.class,
                    e -> assertThat(e.code()).isEqualTo(ErrorCode.WORKER_NOT_FOUND));
            // A mistyped queue is refused, not recorded as a paused worker; the fixed workers may be declared ahead.
            assertThatThrownBy(() -> sluice.fleet().setTarget("queue:never-ran", 0)).isInstanceOfSatisfying(SluiceException.class,
                    e -> assertThat(e.code()).isEqualTo(ErrorCode.WORKER_NOT_FOUND));
            assertThat(sluice.fleet().workers()).extracting(WorkerInfo::key).doesNotContain("queue:never-ran");
            assertThat(sluice.fleet().setTarget("schedules", 0).targetInstances()).isZero();
            assertThat(sluice.fleet().setTarget("schedules", -1).targetInstances()).isEqualTo(-1);
            for (String malformed : new String[] {"", "consumer:", "consumer:a", "consumer:/b", "queue:Bad Name", "queue:x\u0000",
                    "worker", "consumer:a/b/c"}) {
                assertThatThrownBy(() -> sluice.fleet().setTarget(malformed, 0)).as(malformed)
                        .isInstanceOfSatisfying(SluiceException.class, e -> {
                            assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT);
                            assertThat(e.getMessage()).doesNotContain("\u0000");
                        });
            }
            assertThat(sluice.fleet().worker(key).targetInstances()).isEqualTo(-1);
            assertThatThrownBy(() -> Sluice.builder().fleetLease(Duration.ofMillis(10)))
                    .isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_CONFIG));
            assertThatThrownBy(() -> Sluice.builder().maintenanceInterval(Duration.ZERO))
                    .isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_CONFIG));
            assertThatThrownBy(() -> Sluice.builder().instanceLogRetention(null))
                    .isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_CONFIG));
        }
    }
}
