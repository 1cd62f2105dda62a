package dev.sluice.produce;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.ErrorCode;
import dev.sluice.Outgoing;
import dev.sluice.ProduceOptions;
import dev.sluice.Produced;
import dev.sluice.Producer;
import dev.sluice.SchemaVersion;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import dev.sluice.StreamConfig;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

@SluiceTest
class ProduceTest {
    static Sluice sluice;
    static Rows rows;

    @SchemaVersion(3)
    public record Order(String id, int quantity, List<String> tags) {
    }

    @BeforeAll
    static void setUp(TestDatabase db) {
        sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).allowDestroy(true).build();
        rows = new Rows(db);
    }

    @AfterAll
    static void tearDown() {
        sluice.close();
    }

    static void assertCode(ErrorCode code, ThrowingCallable call) {
        assertThatThrownBy(call).isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(code));
    }

    @Test
    void payloadsRoundTripByteExactWithContentTypeAndSchemaVersion() throws Exception {
        long id = sluice.stream("roundtrip").register().id();
        byte[] all = new byte[256 * 4];
        for (int i = 0; i < all.length; i++) {
            all[i] = (byte) i;
        }
        byte[] random = new byte[10_000];
        new Random(7).nextBytes(random);
        Producer<byte[]> raw = sluice.stream("roundtrip").producer();
        Producer<String> text = sluice.stream("roundtrip", String.class).producer();
        Producer<Order> json = sluice.stream("roundtrip", Order.class).producer();

        Produced a = raw.produce(all);
        Produced b = raw.produce(random);
        Produced e = raw.produce(new byte[0]);
        Produced t = text.produce("żółć ✓ \u0001 end");
        Order order = new Order("o-1", 3, List.of("x", "y"));
        Produced j = json.produce(order);

        Map<Long, Rows.Row> log = rows.log(id);
        assertThat(log.get(a.id()).payload()).isEqualTo(all);
        assertThat(log.get(b.id()).payload()).isEqualTo(random);
        assertThat(log.get(e.id()).payload()).isEmpty();
        assertThat(new String(log.get(t.id()).payload(), StandardCharsets.UTF_8)).isEqualTo("żółć ✓ \u0001 end");
        assertThat(new ObjectMapper().readValue(log.get(j.id()).payload(), Order.class)).isEqualTo(order);
        assertThat(log.get(a.id()).contentType()).isEqualTo("application/octet-stream");
        assertThat(log.get(t.id()).contentType()).isEqualTo("text/plain; charset=utf-8");
        assertThat(log.get(j.id()).contentType()).isEqualTo("application/json");
        assertThat(log.get(a.id()).schemaVersion()).isEqualTo(1);
        assertThat(log.get(j.id()).schemaVersion()).isEqualTo(3);
    }

    @Test
    void keysHeadersAndDeliverAtAreStored() {
        long id = sluice.stream("options").register().id();
        Instant at = Instant.parse("2030-01-02T03:04:05Z");
        Produced p = sluice.stream("options", String.class).producer().produce("x", ProduceOptions.builder()
                .messageKey("customer-7").routingKey("eu.orders.created").header("traceparent", "00-abc-01")
                .header("tenant", "acme").deliverAt(at).build());
        Rows.Row row = rows.log(id).get(p.id());
        assertThat(row.messageKey()).isEqualTo("customer-7");
        assertThat(row.routingKey()).isEqualTo("eu.orders.created");
        assertThat(row.headers()).isEqualTo("{\"tenant\": \"acme\", \"traceparent\": \"00-abc-01\"}");
        assertThat(row.options()).isEqualTo("{\"deliver_at\": \"2030-01-02T03:04:05Z\"}");
        assertThat(row.rank()).isNull();
    }

    @Test
    void batchIsAllOrNothingAndResultsAreInOrder() {
        long id = sluice.stream("batch").register(StreamConfig.builder().maxPayloadBytes(100).build()).id();
        Producer<String> p = sluice.stream("batch", String.class).producer();
        List<Produced> ok = p.produceBatch(List.of(Outgoing.of("a"), Outgoing.of("b"), Outgoing.of("c")));
        assertThat(ok).extracting(Produced::id).isSorted().doesNotHaveDuplicates();
        assertThat(rows.log(id).values()).extracting(r -> new String(r.payload(), StandardCharsets.UTF_8))
                .containsExactly("a", "b", "c");
        assertThat(rows.log(id).values()).extracting(Rows.Row::xid).containsOnly(rows.log(id).get(ok.get(0).id()).xid());

        // One bad row (validation) → nothing written, and the error names the row.
        assertThatThrownBy(() -> p.produceBatch(List.of(Outgoing.of("d"), Outgoing.of("x".repeat(101)), Outgoing.of("e"))))
                .isInstanceOfSatisfying(SluiceException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.PAYLOAD_TOO_LARGE);
                    assertThat(e.problem()).startsWith("message 1 of the batch");
                });
        assertCode(ErrorCode.NULL_PAYLOAD, () -> p.produceBatch(List.of(Outgoing.of("d"), Outgoing.of(null))));
        assertThat(rows.count(id)).isEqualTo(3);
    }

    @Test
    void aBatchFailingInTheDatabaseWritesNothing(TestDatabase db) {
        long id = sluice.stream("batch-db-failure").register().id();
        installPoisonTrigger(db, id);
        Producer<String> p = sluice.stream("batch-db-failure", String.class).producer();
        assertThatThrownBy(() -> p.produceBatch(List.of(Outgoing.of("fine"), Outgoing.of("poison"), Outgoing.of("fine too"))))
                .isInstanceOf(SluiceException.class).hasMessageContaining("poisoned");
        assertThat(rows.count(id)).isZero();
    }

    static void installPoisonTrigger(TestDatabase db, long streamId) {
        String q = "\"" + db.schema() + "\"";
        db.execute("CREATE OR REPLACE FUNCTION " + q + ".poison() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                + " IF NEW.payload = convert_to('poison', 'UTF8') THEN RAISE EXCEPTION 'poisoned message'; END IF;"
                + " RETURN NEW; END $$");
        db.execute("CREATE TRIGGER poison BEFORE INSERT ON " + q + ".message_log_" + streamId
                + " FOR EACH ROW EXECUTE FUNCTION " + q + ".poison()");
    }

    @Test
    void badInputIsCodedAndWritesNothing() {
        long id = sluice.stream("bad-input").register(StreamConfig.builder().maxPayloadBytes(1024).build()).id();
        Producer<byte[]> p = sluice.stream("bad-input").producer();
        assertCode(ErrorCode.NULL_PAYLOAD, () -> p.produce(null));
        assertCode(ErrorCode.PAYLOAD_TOO_LARGE, () -> p.produce(new byte[1025]));
        assertCode(ErrorCode.INVALID_KEY, () -> p.produce(new byte[1], ProduceOptions.key("")));
        assertCode(ErrorCode.INVALID_KEY, () -> p.produce(new byte[1], ProduceOptions.key("k".repeat(257))));
        assertCode(ErrorCode.INVALID_KEY, () -> p.produce(new byte[1], ProduceOptions.builder().routingKey("a\0b").build()));
        assertCode(ErrorCode.INVALID_KEY, () -> p.produce(new byte[1], ProduceOptions.idempotent("i".repeat(300))));
        assertCode(ErrorCode.INVALID_HEADERS, () -> p.produce(new byte[1], ProduceOptions.builder().header("", "v").build()));
        assertCode(ErrorCode.INVALID_HEADERS, () -> p.produce(new byte[1], ProduceOptions.builder().header("h", "x".repeat(9000)).build()));
        ProduceOptions.Builder many = ProduceOptions.builder();
        for (int i = 0; i < 65; i++) {
            many.header("h" + i, "v");
        }
        assertCode(ErrorCode.INVALID_HEADERS, () -> p.produce(new byte[1], many.build()));
        assertCode(ErrorCode.INVALID_OPTIONS, () -> p.produce(new byte[1], ProduceOptions.builder().compaction(1).build()));
        assertThat(p.produceAsync(null, ProduceOptions.NONE)).isCompletedExceptionally();
        assertThat(p.produce(new byte[1024], ProduceOptions.key("k".repeat(256))).id()).isPositive();
        assertThat(rows.count(id)).isEqualTo(1);
    }

    @Test
    void unserializablePayloadsAreCoded() {
        sluice.stream("unserializable").register();
        Producer<Object> p = sluice.stream("unserializable", Object.class).producer();
        assertCode(ErrorCode.PAYLOAD_NOT_SERIALIZABLE, () -> p.produce(new Object()));
    }

    @Test
    void unknownAndDestroyedStreamsAreCoded() {
        assertCode(ErrorCode.STREAM_NOT_FOUND, () -> sluice.stream("never-registered").producer().produce(new byte[1]));
        assertCode(ErrorCode.INVALID_NAME, () -> sluice.stream("Bad Name").producer().produce(new byte[1]));

        sluice.stream("doomed").register();
        Producer<byte[]> p = sluice.stream("doomed").producer();
        p.produce(new byte[] {1});
        sluice.stream("doomed").destroy(true);
        assertCode(ErrorCode.STREAM_NOT_FOUND, () -> p.produce(new byte[] {2}));
        assertCode(ErrorCode.STREAM_NOT_FOUND, () -> p.produceBatch(List.of(Outgoing.of(new byte[] {3}))));
    }

    @Test
    void closedProducersRefuse() {
        sluice.stream("closing").register();
        Producer<byte[]> p = sluice.stream("closing").producer();
        p.produce(new byte[] {1});
        p.close();
        assertCode(ErrorCode.PRODUCER_CLOSED, () -> p.produce(new byte[] {2}));
        assertCode(ErrorCode.PRODUCER_CLOSED, () -> p.produceBatch(List.of(Outgoing.of(new byte[] {3}))));
    }

    @Test
    void renamedStreamsKeepProducing() {
        long id = sluice.stream("before-rename").register().id();
        Producer<byte[]> p = sluice.stream("before-rename").producer();
        p.produce(new byte[] {1});
        sluice.stream("before-rename").rename("after-rename");
        p.produce(new byte[] {2});
        List<Long> ids = new ArrayList<>(rows.log(id).keySet());
        assertThat(ids).hasSize(2);
    }
}
