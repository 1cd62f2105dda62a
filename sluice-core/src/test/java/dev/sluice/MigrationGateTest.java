package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.internal.schema.SchemaSteps;
import dev.sluice.internal.schema.Scope;
import dev.sluice.testing.PgCatalog;
import java.util.List;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

@SluiceTest
class MigrationGateTest {

    private static Sluice client(TestDatabase db, String schema, SchemaSteps steps, boolean migrate) {
        return Sluice.builder().dataSource(db.dataSource()).schema(schema).migrate(migrate).schemaSteps(steps).build();
    }

    private static void assertCode(ErrorCode code, ThrowingCallable call) {
        assertThatThrownBy(call).isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(code));
    }

    /** Everything an assertion of "nothing touched" compares: tables, ledger and config rows. */
    private static String fingerprint(TestDatabase db, String schema) {
        PgCatalog cat = new PgCatalog(db, schema);
        String q = "\"" + schema + "\"";
        return cat.tables() + "|" + cat.strings("SELECT string_agg(version || step || checksum || coalesce(stream_id, 0), ',' ORDER BY id) FROM "
                + q + ".migration_log") + "|" + cat.strings("SELECT string_agg(name || config::text, ',' ORDER BY id) FROM " + q + ".stream_config")
                + "|" + cat.columns("message_log_1").keySet();
    }

    @Test
    void aDatabaseNewerThanTheCodeIsRefusedAndNothingIsTouched(TestDatabase db) {
        String schema = db.freshSchemaName("newer");
        Sluice sluice = client(db, schema, SchemaSteps.RELEASED, true);
        sluice.stream("a").register();
        db.execute("INSERT INTO \"" + schema + "\".migration_log (system_id, scope, version, step, checksum, applied_by)"
                + " SELECT id, 'system', " + (SchemaSteps.RELEASED.codeVersion(Scope.SYSTEM) + 1) + ", 'V999__future', 'abc',"
                + " 'a newer sluice' FROM \"" + schema + "\".system_config");
        String before = fingerprint(db, schema);

        assertCode(ErrorCode.DATABASE_NEWER, () -> sluice.system().register());
        assertCode(ErrorCode.DATABASE_NEWER, () -> sluice.system().get());
        assertCode(ErrorCode.DATABASE_NEWER, () -> sluice.stream("a").register());
        assertCode(ErrorCode.DATABASE_NEWER, () -> sluice.stream("b").register());
        assertCode(ErrorCode.DATABASE_NEWER, sluice::streams);
        assertCode(ErrorCode.DATABASE_NEWER, () -> sluice.migrations().up());

        assertThat(fingerprint(db, schema)).isEqualTo(before);
        assertThat(sluice.migrations().status().get(0)).satisfies(s -> {
            assertThat(s.state()).isEqualTo(MigrationStatus.State.NEWER);
            assertThat(s.databaseVersion()).isEqualTo(SchemaSteps.RELEASED.codeVersion(Scope.SYSTEM) + 1);
            assertThat(s.codeVersion()).isEqualTo(SchemaSteps.RELEASED.codeVersion(Scope.SYSTEM));
        });
    }

    @Test
    void aTamperedLedgerIsRefusedAndNothingIsTouched(TestDatabase db) {
        String schema = db.freshSchemaName("tampered");
        Sluice sluice = client(db, schema, SchemaSteps.RELEASED, true);
        sluice.stream("a").register();
        db.execute("UPDATE \"" + schema + "\".migration_log SET checksum = 'edited' WHERE system_id IS NOT NULL");
        String before = fingerprint(db, schema);

        assertCode(ErrorCode.MIGRATION_CHECKSUM_MISMATCH, () -> sluice.system().register());
        assertCode(ErrorCode.MIGRATION_CHECKSUM_MISMATCH, () -> sluice.stream("b").register());
        assertCode(ErrorCode.MIGRATION_CHECKSUM_MISMATCH, () -> sluice.migrations().up());
        assertThat(fingerprint(db, schema)).isEqualTo(before);
        assertThat(sluice.migrations().status().get(0).state()).isEqualTo(MigrationStatus.State.CHECKSUM_MISMATCH);
    }

    @Test
    void aTamperedFamilyLedgerIsRefusedForThatStream(TestDatabase db) {
        String schema = db.freshSchemaName("tampered_family");
        Sluice sluice = client(db, schema, SchemaSteps.RELEASED, true);
        StreamInfo a = sluice.stream("a").register();
        sluice.stream("b").register();
        db.execute("UPDATE \"" + schema + "\".migration_log SET checksum = 'edited' WHERE stream_id = " + a.id());

        assertCode(ErrorCode.MIGRATION_CHECKSUM_MISMATCH, () -> sluice.stream("a").register());
        assertThat(sluice.stream("b").register().name()).isEqualTo("b");
        List<MigrationStatus> status = sluice.migrations().status();
        assertThat(status).extracting(MigrationStatus::name, MigrationStatus::state).containsExactly(
                org.assertj.core.groups.Tuple.tuple(schema, MigrationStatus.State.CURRENT),
                org.assertj.core.groups.Tuple.tuple("a", MigrationStatus.State.CHECKSUM_MISMATCH),
                org.assertj.core.groups.Tuple.tuple("b", MigrationStatus.State.CURRENT));
    }

    @Test
    void anOlderControlPlaneIsRefusedWithoutMigrateAndUpgradedByMigrateUp(TestDatabase db) {
        String schema = db.freshSchemaName("older_system");
        client(db, schema, SchemaSteps.RELEASED, true).stream("a").register();
        SchemaSteps newer = SchemaSteps.RELEASED.plus(Scope.SYSTEM, "probe", "CREATE TABLE {schema}.gate_probe (id int);");
        Sluice strict = client(db, schema, newer, false);
        String before = fingerprint(db, schema);

        assertCode(ErrorCode.DATABASE_OLDER, () -> strict.system().register());
        assertCode(ErrorCode.DATABASE_OLDER, () -> strict.system().get());
        assertCode(ErrorCode.DATABASE_OLDER, () -> strict.stream("a").register());
        assertCode(ErrorCode.DATABASE_OLDER, strict::streams);
        assertThat(fingerprint(db, schema)).isEqualTo(before);
        assertThat(strict.migrations().status().get(0).state()).isEqualTo(MigrationStatus.State.PENDING);
        assertThatThrownBy(() -> strict.system().register()).hasMessageContaining("sluice migrate up");

        List<MigrationStatus> after = strict.migrations().up();
        assertThat(after).allSatisfy(s -> assertThat(s.state()).isEqualTo(MigrationStatus.State.CURRENT));
        assertThat(new PgCatalog(db, schema).tables()).contains("gate_probe");
        assertThat(strict.system().get()).map(SystemInfo::version).contains(SchemaSteps.RELEASED.codeVersion(Scope.SYSTEM) + 1);
        // The released code now sees a newer database.
        assertCode(ErrorCode.DATABASE_NEWER, () -> client(db, schema, SchemaSteps.RELEASED, true).system().get());
    }

    @Test
    void aVersion1ControlPlaneGainsTheScheduleColumnsWhenAScheduleIsRegistered(TestDatabase db) {
        String schema = db.freshSchemaName("v1_schedules");
        SchemaSteps v1 = new SchemaSteps(SchemaSteps.RELEASED.system().subList(0, 1), SchemaSteps.RELEASED.stream());
        client(db, schema, v1, true).stream("ticks").register();
        assertThat(new PgCatalog(db, schema).columns("schedule_config")).doesNotContainKey("target_kind");
        ScheduleSpec spec = ScheduleSpec.builder("@every 1m").toStream("ticks").build();

        assertCode(ErrorCode.DATABASE_OLDER, () -> client(db, schema, SchemaSteps.RELEASED, false).schedule("s").register(spec));
        assertCode(ErrorCode.DATABASE_OLDER, () -> client(db, schema, SchemaSteps.RELEASED, true).runSchedules());
        assertThat(new PgCatalog(db, schema).columns("schedule_config")).doesNotContainKey("target_kind");

        Sluice released = client(db, schema, SchemaSteps.RELEASED, true);
        assertThat(released.schedule("s").register(spec).spec()).isEqualTo(spec);
        assertThat(released.system().get()).map(SystemInfo::version).contains(SchemaSteps.RELEASED.codeVersion(Scope.SYSTEM));
        assertThat(new PgCatalog(db, schema).columns("schedule_config")).containsKeys("target_kind", "target_queue", "zone",
                "misfire", "catch_up_max");
    }

    @Test
    void aMaintenancePassLeavesAStreamAtAnOlderFamilyVersionAloneAndSweepsTheRest(TestDatabase db) {
        String schema = db.freshSchemaName("old_family_pass");
        SchemaSteps v1 = new SchemaSteps(SchemaSteps.RELEASED.system(), SchemaSteps.RELEASED.stream().subList(0, 1));
        client(db, schema, v1, true).stream("old").register();
        try (Sluice released = client(db, schema, SchemaSteps.RELEASED, false)) {
            released.stream("current").register();
            MaintenanceReport r = released.maintenance().runOnce();
            assertThat(r.ok()).as(r.toString()).isTrue();
            assertThat(released.maintenance().metrics()).extracting(MetricSnapshot::name).contains("current")
                    .doesNotContain("old");
        }
    }

    @Test
    void aVersion1FamilyMidConsumptionMigratesToCursorVersionsAndDeliversEverythingOnce(TestDatabase db) throws Exception {
        String schema = db.freshSchemaName("v1_fence");
        SchemaSteps v1 = new SchemaSteps(SchemaSteps.RELEASED.system(), SchemaSteps.RELEASED.stream().subList(0, 1));
        Sluice old = client(db, schema, v1, true);
        StreamInfo s = old.stream("f").register();
        for (int i = 0; i < 5; i++) {
            old.stream("f", String.class).producer().produce("m" + i);
        }
        old.close();
        // A group as version 1 left it mid-consumption (written by hand: today's registration writes today's
        // shape): id 1 committed, range 2..3 claimed by a consumer that died (its lease expired), and a pending
        // observation of head 5 under the old rule (one xid whose elders had to end).
        String q = "\"" + schema + "\"";
        db.execute("INSERT INTO " + q + ".consumer_group_config (stream_id, name, config) VALUES (" + s.id() + ", 'g', '{}')");
        db.execute("INSERT INTO " + q + ".consumer_group_cursor_" + s.id() + " (consumer_group_id, claimed, committed,"
                + " settled_head, pending_head, pending_xid) SELECT id, 3, 1, 3, 5, pg_current_xact_id() FROM " + q
                + ".consumer_group_config WHERE name = 'g'");
        db.execute("INSERT INTO " + q + ".claim_lease_" + s.id() + " (consumer_group_id, low, high, owner_token, expires_at)"
                + " SELECT id, 2, 3, gen_random_uuid(), now() - interval '1 second' FROM " + q + ".consumer_group_config"
                + " WHERE name = 'g'");

        assertCode(ErrorCode.DATABASE_OLDER, () -> client(db, schema, SchemaSteps.RELEASED, false).stream("f").register());
        try (Sluice released = client(db, schema, SchemaSteps.RELEASED, true)) {
            assertThat(released.stream("f").register().familyVersion()).isEqualTo(SchemaSteps.RELEASED.codeVersion(Scope.STREAM));
            PgCatalog cat = new PgCatalog(db, schema);
            String cursor = "consumer_group_cursor_" + s.id();
            assertThat(cat.columns(cursor)).containsEntry("pending_xids", "xid8[]").containsEntry("seq", "bigint not null")
                    .doesNotContainKey("pending_xid");
            assertThat(cat.constraints(cursor, 'p')).containsExactly("PRIMARY KEY (consumer_group_id, seq)");
            assertThat(cat.indexes("claim_lease_" + s.id())).noneSatisfy(ix -> assertThat(ix).contains("expires_at"));
            ConsumerGroup<String> g = released.stream("f", String.class).consumerGroup("g");
            assertThat(g.get()).hasValueSatisfying(i -> assertThat(i.committed()).isEqualTo(1));
            java.util.List<String> seen = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
            try (Consumption c = g.consume(m -> {
                seen.add(m.payload());
                return Outcome.success();
            }, ConsumeOptions.defaults().withPollInterval(java.time.Duration.ofMillis(50)))) {
                org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20))
                        .until(() -> g.get().orElseThrow().committed() == 5);
            }
            // The dead consumer's range is taken over; the rest is claimed once the old pending observation is gone.
            assertThat(seen).containsExactlyInAnyOrder("m1", "m2", "m3", "m4");
        }
    }

    @Test
    void aVersion4FamilysExceptionRowsTakeTheirPayloadSizesOnMigration(TestDatabase db) throws Exception {
        String schema = db.freshSchemaName("v4_rows");
        SchemaSteps v4 = new SchemaSteps(SchemaSteps.RELEASED.system(), SchemaSteps.RELEASED.stream().subList(0, 4));
        StreamInfo s;
        try (Sluice old = client(db, schema, v4, true)) {
            s = old.stream("f").register();
            try (dev.sluice.Producer<byte[]> p = old.stream("f").producer()) {
                for (int size : new int[] {7, 700, 7000}) {
                    p.produce(new byte[size]);
                }
            }
            old.stream("f").consumerGroup("g").register();
        }
        String q = "\"" + schema + "\"";
        // Rows as version 4 wrote them (no size): a retry, a deferred key wait and a dead letter.
        db.execute("INSERT INTO " + q + ".exception_queue_" + s.id() + " (consumer_group_id, message_id, status, concurrency,"
                + " attempts, can_run_after) SELECT g.id, x.id, x.status, 'parallel', 1, now() FROM " + q
                + ".consumer_group_config g, (VALUES (1, 'ready'), (2, 'deferred'), (3, 'dead')) AS x(id, status)"
                + " WHERE g.name = 'g'");
        try (Sluice released = client(db, schema, SchemaSteps.RELEASED, true)) {
            assertThat(released.stream("f").register().familyVersion()).isEqualTo(SchemaSteps.RELEASED.codeVersion(Scope.STREAM));
        }
        java.util.List<String> sizes = new java.util.ArrayList<>();
        try (java.sql.Connection c = db.connect(); java.sql.ResultSet rs = c.createStatement().executeQuery(
                "SELECT message_id || ':' || payload_bytes FROM " + q + ".exception_queue_" + s.id() + " ORDER BY message_id")) {
            while (rs.next()) {
                sizes.add(rs.getString(1));
            }
        }
        assertThat(sizes).containsExactly("1:7", "2:700", "3:7000");
    }

    @Test
    void registrationMigratesAnOlderFamilyWhenAllowed(TestDatabase db) {
        String schema = db.freshSchemaName("older_family");
        StreamInfo a = client(db, schema, SchemaSteps.RELEASED, true).stream("a").register();
        SchemaSteps newer = SchemaSteps.RELEASED.plus(Scope.STREAM, "probe",
                "ALTER TABLE {schema}.message_log_{id} ADD COLUMN probe integer;");

        assertCode(ErrorCode.DATABASE_OLDER, () -> client(db, schema, newer, false).stream("a").register());
        assertThat(new PgCatalog(db, schema).columns("message_log_" + a.id())).doesNotContainKey("probe");

        int probeVersion = SchemaSteps.RELEASED.codeVersion(Scope.STREAM) + 1;
        StreamInfo migrated = client(db, schema, newer, true).stream("a").register();
        assertThat(migrated.familyVersion()).isEqualTo(probeVersion);
        assertThat(new PgCatalog(db, schema).columns("message_log_" + a.id())).containsKey("probe");
        StreamInfo fresh = client(db, schema, newer, true).stream("b").register();
        assertThat(fresh.familyVersion()).isEqualTo(probeVersion);
        assertThat(new PgCatalog(db, schema).columns("message_log_" + fresh.id())).containsKey("probe");
    }

    @Test
    void migrateUpInstallsAnEmptySchemaAndReportsEveryScope(TestDatabase db) {
        String schema = db.freshSchemaName("up_empty");
        Sluice sluice = client(db, schema, SchemaSteps.RELEASED, true);
        assertThat(sluice.migrations().status()).singleElement()
                .satisfies(s -> assertThat(s.state()).isEqualTo(MigrationStatus.State.NOT_INSTALLED));
        assertThat(sluice.migrations().up()).singleElement()
                .satisfies(s -> assertThat(s.state()).isEqualTo(MigrationStatus.State.CURRENT));
        sluice.stream("s1").register();
        assertThat(sluice.migrations().status()).extracting(MigrationStatus::scope).containsExactly("system", "stream");
    }

    @Test
    void printedSqlBuildsASchemaTheGatesAccept(TestDatabase db) {
        String schema = db.freshSchemaName("printed");
        Sluice sluice = client(db, schema, SchemaSteps.RELEASED, false);
        String sql = sluice.migrations().sql(1);
        assertThat(sql).contains("CREATE TABLE \"" + schema + "\".stream_config").contains("message_log_1 (")
                .contains("INSERT INTO \"" + schema + "\".migration_log");
        int familyStart = sql.indexOf("-- Family of the stream");
        db.execute(sql.substring(0, familyStart));
        db.execute("INSERT INTO \"" + schema + "\".stream_config (id, system_id, name, partition_size, idempotency_key_ttl_ns,"
                + " empty_compaction_head_ttl_ns, max_payload_bytes, config) SELECT 1, id, 'flyway', 1000000, 86400000000000,"
                + " 3600000000000, 1048576, '{}' FROM \"" + schema + "\".system_config");
        db.execute(sql.substring(familyStart));

        assertThat(sluice.system().get()).isPresent();
        assertThat(sluice.migrations().status()).allSatisfy(s -> assertThat(s.state()).isEqualTo(MigrationStatus.State.CURRENT));
        assertCode(ErrorCode.INVALID_CONFIG, () -> sluice.migrations().sql(0));
    }
}
