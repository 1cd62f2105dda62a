package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.testing.CountingDataSource;
import dev.sluice.testing.PgCatalog;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

@SluiceTest
class SystemRegistrationTest {
    static final List<String> CONTROL_PLANE = List.of("api_token", "consumer_group_config", "job", "job_dead", "job_dependency", "job_event", "job_run", "lock", "maintenance_sweep",
            "metric_snapshot", "migration_log", "schedule_config", "schedule_cursor", "shard_lease", "stream_config", "stream_config_log", "stream_reader_offset", "system_config",
            "worker_config", "worker_config_log", "worker_instance", "worker_instance_log");

    private static Sluice client(TestDatabase db, String schema) {
        return Sluice.builder().dataSource(db.dataSource()).schema(schema).build();
    }

    @Test
    void getIsEmptyBeforeRegistrationAndRegisterCreatesEveryControlPlaneTable(TestDatabase db) {
        Sluice sluice = client(db, db.schema());
        assertThat(sluice.system().get()).isEmpty();
        assertThat(sluice.streams()).isEmpty();

        SystemInfo info = sluice.system().register();

        assertThat(info.schema()).isEqualTo(db.schema());
        assertThat(info.version()).as("V001 control plane, V002 schedules, V003 fleet, V004 shards, V005 job runs, V006 api tokens").isEqualTo(6).isEqualTo(info.codeVersion());
        assertThat(new PgCatalog(db, db.schema()).tables()).containsExactlyElementsOf(CONTROL_PLANE);
        assertThat(sluice.system().get()).contains(info);
    }

    @Test
    void registeringTwiceIsANoOp(TestDatabase db) {
        String schema = db.freshSchemaName("twice");
        Sluice sluice = client(db, schema);
        SystemInfo first = sluice.system().register();
        SystemInfo second = sluice.system().register();

        assertThat(second).isEqualTo(first);
        PgCatalog cat = new PgCatalog(db, schema);
        assertThat(cat.count("SELECT count(*) FROM \"" + schema + "\".system_config")).isEqualTo(1);
        assertThat(cat.count("SELECT count(*) FROM \"" + schema + "\".migration_log")).as("one ledger row per control-plane step").isEqualTo(6);
    }

    @Test
    void concurrentFirstRegistrationsBothSucceedAndCreateOneSetOfTables(TestDatabase db) throws Exception {
        for (int round = 0; round < 3; round++) {
            String schema = db.freshSchemaName("race");
            int racers = 4;
            CyclicBarrier start = new CyclicBarrier(racers);
            ExecutorService pool = Executors.newFixedThreadPool(racers);
            try {
                List<Future<SystemInfo>> results = new ArrayList<>();
                for (int i = 0; i < racers; i++) {
                    results.add(pool.submit(() -> {
                        Sluice sluice = client(db, schema);
                        start.await(10, TimeUnit.SECONDS);
                        return sluice.system().register();
                    }));
                }
                List<SystemInfo> infos = new ArrayList<>();
                for (Future<SystemInfo> f : results) {
                    infos.add(f.get(60, TimeUnit.SECONDS));
                }
                assertThat(infos).allSatisfy(i -> assertThat(i).isEqualTo(infos.get(0)));
            } finally {
                pool.shutdownNow();
            }
            PgCatalog cat = new PgCatalog(db, schema);
            assertThat(cat.tables()).containsExactlyElementsOf(CONTROL_PLANE);
            assertThat(cat.count("SELECT count(*) FROM \"" + schema + "\".system_config")).isEqualTo(1);
            assertThat(cat.count("SELECT count(*) FROM \"" + schema + "\".migration_log")).as("one ledger row per control-plane step").isEqualTo(6);
        }
    }

    @Test
    void invalidSchemaIsRejectedWithoutIo(TestDatabase db) {
        CountingDataSource ds = new CountingDataSource(db.dataSource());
        for (String bad : List.of("", "Sluice", "1abc", "a-b", "pg_catalog", "x".repeat(64), "a b", "s\"; drop")) {
            assertThatThrownBy(() -> Sluice.builder().dataSource(ds).schema(bad).build())
                    .isInstanceOfSatisfying(SluiceException.class,
                            e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_SCHEMA_NAME));
        }
        assertThatThrownBy(() -> Sluice.builder().build())
                .isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_CONFIG));
        assertThat(ds.opened()).isZero();
    }

    @Test
    void twoInstallationsShareADatabaseIndependently(TestDatabase db) {
        String a = db.freshSchemaName("inst_a");
        String b = db.freshSchemaName("inst_b");
        client(db, a).stream("orders").register();
        client(db, b).system().register();
        assertThat(client(db, a).streams()).extracting(StreamInfo::name).containsExactly("orders");
        assertThat(client(db, b).streams()).isEmpty();
    }
}
