package dev.sluice.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sluice.InstanceInfo;
import dev.sluice.MaintenanceReport;
import dev.sluice.MaintenanceStatus;
import dev.sluice.MetricSnapshot;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.StreamConfig;
import dev.sluice.SweepResult;
import dev.sluice.SweepStatus;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The elected manager: one holder among clients, failover on close, passes recorded; run-once, cleanup, metrics. */
@SluiceTest
class ManagerTest {
    static final Duration LEASE = Duration.ofMillis(900);

    static Sluice client(TestDatabase db, String id, boolean maintenance) {
        return Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).clientId(id).fleetLease(LEASE)
                .maintenanceInterval(Duration.ofMillis(200)).maintenance(maintenance).build();
    }

    @Test
    void oneOfTwoClientsManagesAndTheOtherTakesOverWhenItCloses(TestDatabase db) {
        Sluice a = client(db, "mgr-a", true);
        try (Sluice b = client(db, "mgr-b", true)) {
            a.stream("mgr.s").register(StreamConfig.defaults());
            Producer<byte[]> pa = a.stream("mgr.s").producer(); // the first running part: the client competes
            await().atMost(Duration.ofSeconds(5)).until(() -> a.maintenance().holding());
            Producer<byte[]> pb = b.stream("mgr.s").producer();
            await().atMost(Duration.ofSeconds(5)).until(() -> b.fleet().instances().stream()
                    .filter(i -> i.worker().equals("manager")).count() == 2);
            assertThat(b.maintenance().holding()).isFalse();
            MaintenanceStatus st = b.maintenance().status();
            assertThat(st.manager()).map(InstanceInfo::holder).contains("mgr-a");
            assertThat(st.paused()).isFalse();
            // The holder's passes are recorded, run by it.
            await().atMost(Duration.ofSeconds(5)).until(() -> b.maintenance().status().sweeps().stream()
                    .anyMatch(s -> s.name().equals("metrics") && s.runBy().equals("mgr-a")));

            a.close(); // leaves the election at once: b takes over without waiting for the lease
            await().atMost(LEASE).until(() -> b.maintenance().holding());
            await().atMost(Duration.ofSeconds(5)).until(() -> b.maintenance().status().sweeps().stream()
                    .filter(s -> s.name().equals("metrics")).allMatch(s -> s.runBy().equals("mgr-b")));
            assertThat(b.maintenance().status().manager()).map(InstanceInfo::holder).contains("mgr-b");
            pb.close();
            pa.close();
        } finally {
            a.close();
        }
    }

    @Test
    void pausingTheManagerStopsItsPassesAndMaintenanceOffNeverCompetes(TestDatabase db) throws Exception {
        try (Sluice off = client(db, "mgr-off", false); Sluice on = client(db, "mgr-on", true)) {
            off.stream("mgr.p").register(StreamConfig.defaults());
            try (Producer<byte[]> p = off.stream("mgr.p").producer(); Producer<byte[]> q = on.stream("mgr.p").producer()) {
                await().atMost(Duration.ofSeconds(5)).until(() -> on.maintenance().holding());
                assertThat(off.fleet().instances()).extracting(InstanceInfo::holder).doesNotContain("mgr-off");
                on.fleet().setTarget("manager", 0);
                await().atMost(Duration.ofSeconds(5)).until(() -> !on.maintenance().holding());
                assertThat(on.maintenance().status().paused()).isTrue();
                long shutAt = FleetTest.scalar(db, "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::int8");
                Thread.sleep(1_500); // over seven intervals: no pass may start while paused (one under way may end)
                long lastStart = FleetTest.scalar(db, "SELECT (extract(epoch FROM max(started_at)) * 1000)::int8 FROM "
                        + db.schema() + ".maintenance_sweep WHERE name = 'worker_instances'");
                assertThat(lastStart).isLessThan(shutAt);
                long runs = runs(on);
                on.fleet().setTarget("manager", 1);
                await().atMost(Duration.ofSeconds(5)).until(() -> runs(on) > runs);
            }
        }
    }

    private static long runs(Sluice s) {
        return s.maintenance().status().sweeps().stream().filter(x -> x.name().equals("metrics")).mapToLong(SweepStatus::runs)
                .findFirst().orElse(0);
    }

    @Test
    void runOnceCleansExpiredInstancesAndOldSnapshotsButKeepsLiveOnes(TestDatabase db) {
        try (Sluice sluice = client(db, "mgr-run", false)) {
            sluice.stream("mgr.r").register(StreamConfig.defaults());
            String s = db.schema();
            long worker = FleetTest.scalar(db, "INSERT INTO " + s + ".worker_config (name, system_id, target_instances)"
                    + " SELECT 'queue:ghosts', id, -1 FROM " + s + ".system_config RETURNING id");
            // Two expired instances (a killed process), one live, snapshots old and fresh.
            db.execute("INSERT INTO " + s + ".worker_instance (worker_config_id, token, holder, expires_at) VALUES"
                    + " (" + worker + ", gen_random_uuid(), 'dead-1', now() - interval '1 minute'),"
                    + " (" + worker + ", gen_random_uuid(), 'dead-2', now() - interval '1 second'),"
                    + " (" + worker + ", gen_random_uuid(), 'alive', now() + interval '1 hour')");
            db.execute("INSERT INTO " + s + ".worker_instance_log (worker_config_id, instance_id, token, holder, failures,"
                    + " instance_created_at, expires_at) SELECT " + worker + ", g, gen_random_uuid(), 'old', 0, now(),"
                    + " now() - interval '25 hours' FROM generate_series(1, 2500) g");
            db.execute("INSERT INTO " + s + ".worker_instance_log (worker_config_id, instance_id, token, holder, failures,"
                    + " instance_created_at, expires_at) VALUES (" + worker + ", 9, gen_random_uuid(), 'recent', 0, now(),"
                    + " now() - interval '23 hours')");

            MaintenanceReport r = sluice.maintenance().runOnce();
            assertThat(r.ok()).as(r.toString()).isTrue();
            assertThat(r.sweeps()).extracting(SweepResult::name).containsExactly("worker_instances", "instance_log",
                    "partitions_ahead", "retention", "idempotency_keys", "compaction_heads", "delivery_log", "dead_letters",
                    "queue_rescue", "queue_expiry", "dead_jobs", "job_runs", "job_events", "metrics");
            assertThat(r.removed("worker_instances")).isEqualTo(2);
            assertThat(r.removed("instance_log")).isEqualTo(2500); // three batches of at most 1,000
            assertThat(sluice.fleet().instances()).extracting(InstanceInfo::holder).containsExactly("alive");
            assertThat(FleetTest.scalar(db, "SELECT count(*) FROM " + s + ".worker_instance_log WHERE holder = 'recent'")).isEqualTo(1);
            // Idempotent: a second pass removes nothing more.
            MaintenanceReport again = sluice.maintenance().runOnce();
            assertThat(again.removed("worker_instances")).isZero();
            assertThat(again.removed("instance_log")).isZero();
            // Recorded, whoever ran it.
            List<SweepStatus> sweeps = sluice.maintenance().status().sweeps();
            assertThat(sweeps).filteredOn(x -> x.name().equals("instance_log")).singleElement().satisfies(x -> {
                assertThat(x.runs()).isEqualTo(2);
                assertThat(x.lastRemoved()).isZero();
                assertThat(x.runBy()).isEqualTo("mgr-run");
                assertThat(x.lastError()).isNull();
            });
        }
    }

    @Test
    void theElectedManagerEnforcesRetentionOnItsOwn(TestDatabase db) throws Exception {
        // The data first, with a client that does not compete: 35 messages in partitions of 10, all consumed.
        try (Sluice app = client(db, "mgr-app", false)) {
            app.stream("mgr.ret").register(StreamConfig.builder().partitionSize(10).retention(Duration.ofSeconds(1)).build());
            java.util.Set<Long> seen = java.util.concurrent.ConcurrentHashMap.newKeySet();
            try (Producer<byte[]> p = app.stream("mgr.ret").producer();
                 dev.sluice.Consumption c = consumeAll(app, "mgr.ret", seen)) {
                for (int i = 0; i < 35; i++) {
                    p.produce(new byte[] {(byte) i});
                }
                await().atMost(Duration.ofSeconds(10)).until(() -> seen.size() == 35
                        && app.stream("mgr.ret").consumerGroup("all").get().orElseThrow().lag() == 0);
            }
        }
        Thread.sleep(1_100); // every message is now older than the retention
        // Then a client that competes for the manager; nobody calls runOnce: its passes drop the partitions below the
        // group's position and keep the head's.
        try (Sluice sluice = client(db, "mgr-retention", true); Producer<byte[]> running = sluice.stream("mgr.ret").producer()) {
            String log = "\"" + db.schema() + "\".message_log_" + sluice.stream("mgr.ret").get().orElseThrow().id();
            await().atMost(Duration.ofSeconds(20)).until(() -> FleetTest.scalar(db, "SELECT min(id) FROM " + log) >= 30);
            // Partitions [1, 10), [10, 20), [20, 30) are gone; the head's partition keeps its 6 messages.
            assertThat(FleetTest.scalar(db, "SELECT count(*) FROM " + log)).isEqualTo(6);
            // The pass is recorded when it ends.
            await().atMost(Duration.ofSeconds(5)).until(() -> sluice.maintenance().status().sweeps().stream()
                    .anyMatch(x -> x.name().equals("retention") && x.runBy().equals("mgr-retention") && x.runs() > 1));
        }
    }

    private static dev.sluice.Consumption consumeAll(Sluice sluice, String stream, java.util.Set<Long> seen) {
        dev.sluice.ConsumerGroup<byte[]> g = sluice.stream(stream).consumerGroup("all");
        g.register();
        return g.consume(m -> {
            seen.add(m.id());
            return dev.sluice.Outcome.success();
        });
    }

    @Test
    void metricSnapshotsCarryHeadsLagAndQueueDepths(TestDatabase db) {
        try (Sluice sluice = client(db, "mgr-metrics", false)) {
            sluice.stream("mgr.m").register(StreamConfig.defaults());
            sluice.stream("mgr.m").consumerGroup("behind").register();
            try (Producer<byte[]> p = sluice.stream("mgr.m").producer()) {
                for (int i = 0; i < 7; i++) {
                    p.produce(new byte[] {1});
                }
            }
            sluice.queue("mgr.jobs").enqueue(new byte[] {2});
            sluice.queue("mgr.jobs").enqueue(new byte[] {3}, dev.sluice.EnqueueOptions.builder().delay(Duration.ofHours(1)).build());
            sluice.maintenance().runOnce();
            List<MetricSnapshot> m = sluice.maintenance().metrics().stream().filter(x -> x.name().startsWith("mgr.m")
                    || x.name().equals("mgr.jobs")).toList();
            assertThat(m).filteredOn(x -> x.kind().equals("stream")).singleElement().satisfies(x -> {
                assertThat(x.name()).isEqualTo("mgr.m");
                assertThat(x.head()).isEqualTo(7);
                assertThat(x.ratePerSecond()).isNull();
            });
            assertThat(m).filteredOn(x -> x.kind().equals("group")).singleElement().satisfies(x -> {
                assertThat(x.name()).isEqualTo("mgr.m/behind");
                assertThat(x.lag()).isEqualTo(7);
                assertThat(x.committed()).isZero();
            });
            assertThat(m).filteredOn(x -> x.kind().equals("queue")).singleElement().satisfies(x -> {
                assertThat(x.name()).isEqualTo("mgr.jobs");
                assertThat(x.pending()).isEqualTo(2);
                assertThat(x.processing()).isZero();
            });
            // The next pass computes a rate from the previous snapshot.
            sluice.maintenance().runOnce();
            assertThat(sluice.maintenance().metrics()).filteredOn(x -> x.name().equals("mgr.m")).singleElement()
                    .satisfies(x -> assertThat(x.ratePerSecond()).isNotNull());
        }
    }
}
