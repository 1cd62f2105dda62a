package dev.sluice.produce;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.ErrorCode;
import dev.sluice.ProduceOptions;
import dev.sluice.Produced;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.postgresql.util.PSQLException;
import org.postgresql.util.PSQLState;

@SluiceTest
class TransactionalProduceTest {
    static Sluice sluice;
    static Rows rows;
    static String q;

    @BeforeAll
    static void setUp(TestDatabase db) {
        sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build();
        rows = new Rows(db);
        q = "\"" + db.schema() + "\"";
        sluice.system().register(); // first: Sluice refuses to install into a schema holding an application's tables
        db.execute("CREATE TABLE " + q + ".orders (id text PRIMARY KEY)");
    }

    @AfterAll
    static void tearDown() {
        sluice.close();
    }

    private static void insertOrder(Connection c, String id) {
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + q + ".orders VALUES (?)")) {
            ps.setString(1, id);
            ps.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void theMessageExistsIfAndOnlyIfTheCallerCommits(TestDatabase db) throws Exception {
        long id = sluice.stream("outbox").register().id();
        Producer<String> p = sluice.stream("outbox", String.class).producer();
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            insertOrder(c, "rolled-back");
            Produced gone = p.produceInTransaction(c, "order rolled-back", ProduceOptions.NONE);
            assertThat(gone.id()).isPositive();
            c.rollback();

            insertOrder(c, "committed");
            Produced kept = p.produceInTransaction(c, "order committed", ProduceOptions.key("committed"));
            assertThat(rows.count(id)).as("invisible before the caller commits").isZero();
            c.commit();
            assertThat(rows.log(id)).containsOnlyKeys(kept.id());
        }
        assertThat(rows.strings("SELECT id FROM " + q + ".orders")).containsExactly("committed");
    }

    @Test
    void anAutoCommitConnectionIsRefused(TestDatabase db) throws Exception {
        long id = sluice.stream("outbox-autocommit").register().id();
        Producer<String> p = sluice.stream("outbox-autocommit", String.class).producer();
        try (Connection c = db.connect()) {
            assertThatThrownBy(() -> p.produceInTransaction(c, "x", ProduceOptions.NONE))
                    .isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_OPTIONS));
        }
        assertThat(rows.count(id)).isZero();
    }

    @Test
    void theCallbackFormWritesBothOrNeitherAndReplaysOnSerializationFailure() {
        long id = sluice.stream("callback").register().id();
        Producer<String> p = sluice.stream("callback", String.class).producer();

        Produced ok = p.produce(c -> {
            insertOrder(c, "cb-1");
            return "order cb-1";
        }, ProduceOptions.NONE);
        assertThat(rows.log(id)).containsOnlyKeys(ok.id());

        assertThatThrownBy(() -> p.produce(c -> {
            insertOrder(c, "cb-2");
            throw new IllegalArgumentException("business rule says no");
        }, ProduceOptions.NONE)).isInstanceOf(IllegalArgumentException.class);

        AtomicInteger calls = new AtomicInteger();
        Produced replayed = p.produce(c -> {
            insertOrder(c, "cb-3");
            if (calls.incrementAndGet() == 1) {
                throw new IllegalStateException(new PSQLException("simulated", PSQLState.SERIALIZATION_FAILURE));
            }
            return "order cb-3";
        }, ProduceOptions.NONE);
        assertThat(calls).hasValue(2);
        assertThat(rows.log(id)).containsOnlyKeys(ok.id(), replayed.id());
        assertThat(rows.strings("SELECT id FROM " + q + ".orders WHERE id LIKE 'cb-%' ORDER BY id")).containsExactly("cb-1", "cb-3");

        // Validation inside the callback form rolls the caller's writes back too.
        assertThatThrownBy(() -> p.produce(c -> {
            insertOrder(c, "cb-4");
            return null;
        }, ProduceOptions.NONE)).isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NULL_PAYLOAD));
        assertThat(rows.strings("SELECT id FROM " + q + ".orders WHERE id = 'cb-4'")).isEmpty();
    }
}
