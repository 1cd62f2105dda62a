package dev.sluice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.testing.CountingDataSource;
import dev.sluice.testing.PgCatalog;
import java.time.Duration;
import java.util.List;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

@SluiceTest
class StreamLifecycleTest {

    private static Sluice client(TestDatabase db, boolean allowDestroy) {
        return Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).allowDestroy(allowDestroy).build();
    }

    private static void assertCode(ErrorCode code, ThrowingCallable call) {
        assertThatThrownBy(call).isInstanceOfSatisfying(SluiceException.class, e -> {
            assertThat(e.code()).isEqualTo(code);
            assertThat(e.getMessage()).endsWith("[" + code.code() + "]");
        });
    }

    @Test
    void firstRegistrationInstallsTheSystemAndCreatesTheStream(TestDatabase db) {
        Sluice sluice = client(db, false);
        StreamInfo info = sluice.stream("orders.created").register();

        assertThat(info.name()).isEqualTo("orders.created");
        assertThat(info.config()).isEqualTo(StreamConfig.defaults());
        assertThat(info.familyVersion()).isEqualTo(dev.sluice.internal.schema.SchemaSteps.RELEASED.codeVersion(dev.sluice.internal.schema.Scope.STREAM));
        assertThat(sluice.system().get()).isPresent();
        assertThat(sluice.stream("orders.created").get()).contains(info);
        assertThat(sluice.streams()).extracting(StreamInfo::name).contains("orders.created");
        assertThat(new PgCatalog(db, db.schema()).tables()).contains("message_log_" + info.id(), "claim_lease_" + info.id());
    }

    @Test
    void reRegistrationReplacesTheWholeDocumentAndLogsEveryDeclaration(TestDatabase db) {
        Sluice sluice = client(db, false);
        Stream<byte[]> stream = sluice.stream("redeclared");
        StreamConfig tuned = StreamConfig.builder().retention(Duration.ofDays(7)).idempotencyKeyTtl(Duration.ofHours(2))
                .deliveryLogMode(DeliveryLogMode.ALL).maxPayloadBytes(4096).allowDropPastCommitted(true)
                .emptyCompactionHeadTtl(Duration.ofMinutes(5)).build();
        StreamInfo created = stream.register();
        StreamInfo updated = stream.register(tuned);
        StreamInfo same = stream.register(tuned);
        StreamInfo back = stream.register(StreamConfig.defaults()); // unset fields mean defaults again

        assertThat(updated.id()).isEqualTo(created.id());
        assertThat(updated.config()).isEqualTo(tuned);
        assertThat(same.config()).isEqualTo(tuned);
        assertThat(back.config()).isEqualTo(StreamConfig.defaults());
        PgCatalog cat = new PgCatalog(db, db.schema());
        assertThat(cat.strings("SELECT action FROM \"" + db.schema() + "\".stream_config_log WHERE stream_id = ? ORDER BY id",
                created.id())).containsExactly("created", "updated", "unchanged", "updated");
        assertThat(cat.strings("SELECT config->>'retention' FROM \"" + db.schema()
                + "\".stream_config_log WHERE stream_id = ? AND action = 'unchanged'", created.id())).containsExactly("PT168H");
    }

    @Test
    void partitionSizeIsImmutableAndAFailedDeclarationChangesNothing(TestDatabase db) {
        Sluice sluice = client(db, false);
        Stream<byte[]> stream = sluice.stream("fixed-size");
        StreamInfo created = stream.register(StreamConfig.builder().partitionSize(5000).build());

        assertCode(ErrorCode.IMMUTABLE_FIELD, () -> stream.register(StreamConfig.builder().partitionSize(6000)
                .retention(Duration.ofDays(1)).build()));

        assertThat(stream.get()).contains(created);
        assertThat(new PgCatalog(db, db.schema()).count("SELECT count(*) FROM \"" + db.schema()
                + "\".stream_config_log WHERE stream_id = ?", created.id())).isEqualTo(1);
    }

    @Test
    void renameKeepsTheIdAndTheTableNames(TestDatabase db) {
        Sluice sluice = client(db, false);
        StreamInfo before = sluice.stream("before.rename").register();
        List<String> tablesBefore = new PgCatalog(db, db.schema()).tables();

        StreamInfo after = sluice.stream("before.rename").rename("after.rename");

        assertThat(after.id()).isEqualTo(before.id());
        assertThat(after.name()).isEqualTo("after.rename");
        assertThat(after.config()).isEqualTo(before.config());
        assertThat(sluice.stream("before.rename").get()).isEmpty();
        assertThat(sluice.stream("after.rename").get()).map(StreamInfo::id).contains(before.id());
        assertThat(new PgCatalog(db, db.schema()).tables()).containsExactlyElementsOf(tablesBefore);
        assertThat(new PgCatalog(db, db.schema()).strings("SELECT action || ':' || name FROM \"" + db.schema()
                + "\".stream_config_log WHERE stream_id = ? ORDER BY id", before.id()))
                .containsExactly("created:before.rename", "renamed:after.rename");
    }

    @Test
    void renameToATakenNameOrFromAnUnknownStreamIsRefused(TestDatabase db) {
        Sluice sluice = client(db, false);
        sluice.stream("taken-a").register();
        sluice.stream("taken-b").register();
        assertCode(ErrorCode.STREAM_NAME_TAKEN, () -> sluice.stream("taken-a").rename("taken-b"));
        assertCode(ErrorCode.STREAM_NOT_FOUND, () -> sluice.stream("never-registered").rename("whatever"));
        assertCode(ErrorCode.INVALID_NAME, () -> sluice.stream("taken-a").rename("Bad Name"));
        assertThat(sluice.stream("taken-a").get()).isPresent();
    }

    @Test
    void destroyDropsTheFamilyAndTheRows(TestDatabase db) throws Exception {
        Sluice sluice = client(db, true);
        StreamInfo info = sluice.stream("doomed").register();
        sluice.stream("doomed").destroy(false);

        assertThat(sluice.stream("doomed").get()).isEmpty();
        PgCatalog cat = new PgCatalog(db, db.schema());
        assertThat(cat.tables()).noneMatch(t -> t.endsWith("_" + info.id()) || t.contains("_" + info.id() + "_"));
        assertThat(cat.count("SELECT count(*) FROM \"" + db.schema() + "\".migration_log WHERE stream_id = ?", info.id())).isZero();
        assertThat(cat.count("SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                + " WHERE n.nspname = ? AND c.relname = ?", db.schema(), "message_log_" + info.id() + "_id_seq")).isZero();
        // The name can be registered again and gets a new id (ids are never reused).
        assertThat(sluice.stream("doomed").register().id()).isGreaterThan(info.id());
    }

    @Test
    void destroyRefusesWithoutPermissionOrWhenNonEmptyWithoutForce(TestDatabase db) throws Exception {
        StreamInfo info = client(db, false).stream("guarded").register();
        CountingDataSource counting = new CountingDataSource(db.dataSource());
        Sluice noPermission = Sluice.builder().dataSource(counting).schema(db.schema()).build();
        assertCode(ErrorCode.DESTROY_NOT_ALLOWED, () -> noPermission.stream("guarded").destroy(true));
        assertThat(counting.opened()).isZero();

        db.execute("INSERT INTO \"" + db.schema() + "\".message_log_" + info.id() + " (payload) VALUES ('\\x01')");
        Sluice allowed = client(db, true);
        assertCode(ErrorCode.STREAM_NOT_EMPTY, () -> allowed.stream("guarded").destroy(false));
        assertThat(allowed.stream("guarded").get()).isPresent();
        assertThat(new PgCatalog(db, db.schema()).tables()).contains("message_log_" + info.id());

        allowed.stream("guarded").destroy(true);
        assertThat(allowed.stream("guarded").get()).isEmpty();
        assertCode(ErrorCode.STREAM_NOT_FOUND, () -> allowed.stream("guarded").destroy(true));
    }

    @Test
    void badNamesAreRejectedBeforeAnyRoundTrip(TestDatabase db) {
        CountingDataSource counting = new CountingDataSource(db.dataSource());
        Sluice sluice = Sluice.builder().dataSource(counting).schema(db.schema()).allowDestroy(true).build();
        for (String bad : List.of("", "Orders", "-orders", ".orders", "__system.metrics", "a/b", "a b", "ü",
                "x".repeat(129), "orders\n")) {
            Stream<byte[]> s = sluice.stream(bad); // handles never fail
            assertCode(ErrorCode.INVALID_NAME, s::register);
            assertCode(ErrorCode.INVALID_NAME, s::get);
            assertCode(ErrorCode.INVALID_NAME, () -> s.rename("fine"));
            assertCode(ErrorCode.INVALID_NAME, () -> s.destroy(true));
        }
        assertCode(ErrorCode.INVALID_NAME, () -> sluice.stream(null).register());
        assertThat(counting.opened()).isZero();
        assertThat(Sluice.validateName("stream", "x".repeat(128))).hasSize(128);
    }

    @Test
    void badConfigIsRejectedBeforeAnyRoundTrip() {
        assertCode(ErrorCode.INVALID_CONFIG, () -> StreamConfig.builder().partitionSize(0).build());
        assertCode(ErrorCode.INVALID_CONFIG, () -> StreamConfig.builder().retention(Duration.ZERO).build());
        assertCode(ErrorCode.INVALID_CONFIG, () -> StreamConfig.builder().idempotencyKeyTtl(Duration.ofSeconds(-1)).build());
        assertCode(ErrorCode.INVALID_CONFIG, () -> StreamConfig.builder().emptyCompactionHeadTtl(Duration.ZERO).build());
        assertCode(ErrorCode.INVALID_CONFIG, () -> StreamConfig.builder().maxPayloadBytes(0).build());
        assertCode(ErrorCode.INVALID_CONFIG, () -> StreamConfig.builder().maxPayloadBytes(StreamConfig.MAX_MAX_PAYLOAD_BYTES + 1).build());
        assertCode(ErrorCode.INVALID_CONFIG, () -> StreamConfig.builder().retention(Duration.ofDays(365L * 300)).build());
        assertCode(ErrorCode.INVALID_CONFIG, () -> DeliveryLogMode.parse("sometimes"));
    }

    @Test
    void unknownStreamsReadAsEmptyAndOperationsOnThemAreCoded(TestDatabase db) {
        Sluice sluice = client(db, true);
        sluice.system().register();
        assertThat(sluice.stream("nope").get()).isEmpty();
        assertCode(ErrorCode.STREAM_NOT_FOUND, () -> sluice.stream("nope").destroy(false));
    }

    @Test
    void operationsOnAnEmptySchemaAreCoded(TestDatabase db) {
        Sluice sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.freshSchemaName("empty")).allowDestroy(true).build();
        assertThat(sluice.stream("x").get()).isEmpty();
        assertCode(ErrorCode.SYSTEM_NOT_REGISTERED, () -> sluice.stream("x").rename("y"));
        assertCode(ErrorCode.SYSTEM_NOT_REGISTERED, () -> sluice.stream("x").destroy(true));
    }
}
