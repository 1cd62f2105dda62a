package dev.sluice.tokens;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.ErrorCode;
import dev.sluice.NewToken;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import dev.sluice.TokenInfo;
import dev.sluice.TokenRole;
import dev.sluice.Tokens;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import dev.sluice.testing.CountingDataSource;
import dev.sluice.testing.PgCatalog;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
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

/** API tokens: create, list, revoke, authenticate; hostile secrets and names; what the table keeps; races. */
@SluiceTest
class TokensTest {
    static final String SECRET_FORM = "slu_[A-Za-z0-9_-]{43}";
    static Sluice sluice;
    static Tokens tokens;
    static String q;

    @BeforeAll
    static void setUp(TestDatabase db) {
        sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).maintenance(false).build();
        tokens = sluice.tokens();
        q = "\"" + db.schema() + "\"";
    }

    @AfterAll
    static void tearDown() {
        sluice.close();
    }

    static void assertCode(ThrowingCallable call, ErrorCode code) {
        assertThatThrownBy(call).isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(code));
    }

    static List<String> strings(TestDatabase db, String sql) throws Exception {
        List<String> out = new ArrayList<>();
        try (Connection c = db.connect(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            while (rs.next()) {
                out.add(rs.getString(1));
            }
        }
        return out;
    }

    @Test
    void createAuthenticateListAndRevoke() {
        NewToken made = tokens.create(TokenRole.WRITE, "deploy");
        assertThat(made.secret()).matches(SECRET_FORM);
        TokenInfo info = made.info();
        assertThat(info.id()).isPositive();
        assertThat(info.name()).isEqualTo("deploy");
        assertThat(info.role()).isEqualTo(TokenRole.WRITE);
        assertThat(info.createdAt()).isNotNull();
        assertThat(info.active()).isTrue();
        assertThat(tokens.anyActive()).isTrue();

        assertThat(tokens.authenticate(made.secret())).contains(info);
        assertThat(tokens.list()).contains(info);

        TokenInfo revoked = tokens.revoke("deploy");
        assertThat(revoked.id()).isEqualTo(info.id());
        assertThat(revoked.active()).isFalse();
        assertThat(revoked.revokedAt()).isAfterOrEqualTo(info.createdAt());
        assertThat(tokens.authenticate(made.secret())).as("a revoked token authenticates nothing").isEmpty();
        assertThat(tokens.list()).as("revoked tokens stay listed").contains(revoked).doesNotContain(info);
        assertCode(() -> tokens.revoke("deploy"), ErrorCode.TOKEN_NOT_FOUND);
        assertCode(() -> tokens.revoke(Long.toString(info.id())), ErrorCode.TOKEN_NOT_FOUND);

        // The name is free again once its token is revoked.
        NewToken again = tokens.create(TokenRole.READ, "deploy");
        assertThat(again.info().id()).isGreaterThan(info.id());
        assertThat(again.secret()).isNotEqualTo(made.secret());
        assertThat(tokens.authenticate(again.secret())).map(TokenInfo::role).contains(TokenRole.READ);
        assertThat(tokens.authenticate(made.secret())).isEmpty();
        tokens.revoke(Long.toString(again.info().id()));
        assertThat(tokens.authenticate(again.secret())).isEmpty();
    }

    @Test
    void listIsNewestFirstAndRevokeTakesIdsOrNames() {
        NewToken a = tokens.create(TokenRole.READ, "list-a");
        NewToken b = tokens.create(TokenRole.ADMIN, "list-b");
        NewToken c = tokens.create(TokenRole.WRITE, null);
        assertThat(c.info().name()).as("a generated name").isEqualTo("token-" + c.info().id());

        TokenInfo byId = tokens.revoke(Long.toString(b.info().id()));
        assertThat(byId.name()).isEqualTo("list-b");
        assertThat(tokens.authenticate(a.secret())).isPresent();
        assertThat(tokens.authenticate(b.secret())).isEmpty();
        assertThat(tokens.authenticate(c.secret())).isPresent();

        List<Long> ids = tokens.list().stream().map(TokenInfo::id).toList();
        assertThat(ids).isSortedAccordingTo((x, y) -> Long.compare(y, x))
                .containsSubsequence(c.info().id(), b.info().id(), a.info().id());
        assertThat(tokens.list()).filteredOn(t -> t.id() == b.info().id()).singleElement()
                .satisfies(t -> assertThat(t.active()).isFalse());
        tokens.revoke("list-a");
        tokens.revoke(c.info().name());
    }

    @Test
    void aGeneratedNameThatAnActiveTokenHoldsIsDrawnAgain() {
        long last = tokens.create(TokenRole.READ, "gen-probe").info().id();
        // The next token takes id last + 1; name it as the one after it would be generated.
        NewToken squatter = tokens.create(TokenRole.READ, "token-" + (last + 2));
        assertThat(squatter.info().id()).isEqualTo(last + 1);
        NewToken generated = tokens.create(TokenRole.READ, null);
        assertThat(generated.info().name()).isEqualTo("token-" + generated.info().id()).isNotEqualTo(squatter.info().name());
        assertThat(tokens.authenticate(generated.secret())).contains(generated.info());
    }

    @Test
    void anActiveNameCannotBeTakenTwice() {
        NewToken first = tokens.create(TokenRole.READ, "twice");
        assertCode(() -> tokens.create(TokenRole.ADMIN, "twice"), ErrorCode.TOKEN_NAME_TAKEN);
        assertThat(tokens.list()).filteredOn(t -> t.name().equals("twice")).containsExactly(first.info());
    }

    @Test
    void concurrentCreatesOfOneNameLeaveOneWinner() throws Exception {
        int racers = 6;
        ExecutorService pool = Executors.newFixedThreadPool(racers);
        try {
            CyclicBarrier start = new CyclicBarrier(racers);
            List<Future<Optional<NewToken>>> results = new ArrayList<>();
            for (int i = 0; i < racers; i++) {
                results.add(pool.submit(() -> {
                    start.await(10, TimeUnit.SECONDS);
                    try {
                        return Optional.of(tokens.create(TokenRole.WRITE, "race"));
                    } catch (SluiceException e) {
                        assertThat(e.code()).isEqualTo(ErrorCode.TOKEN_NAME_TAKEN);
                        return Optional.<NewToken>empty();
                    }
                }));
            }
            List<NewToken> won = new ArrayList<>();
            for (Future<Optional<NewToken>> f : results) {
                f.get(30, TimeUnit.SECONDS).ifPresent(won::add);
            }
            assertThat(won).hasSize(1);
            assertThat(tokens.list()).filteredOn(t -> t.name().equals("race") && t.active()).containsExactly(won.get(0).info());
            assertThat(tokens.authenticate(won.get(0).secret())).contains(won.get(0).info());
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void strangerSecretsAuthenticateNothingAndMalformedOnesCostNoRoundTrip(TestDatabase db) {
        NewToken real = tokens.create(TokenRole.ADMIN, "hostile");
        String s = real.secret();
        char last = s.charAt(s.length() - 1);
        String oneOff = s.substring(0, s.length() - 1) + (last == 'A' ? 'B' : 'A');
        assertThat(tokens.authenticate(oneOff)).as("same form, another secret").isEmpty();
        assertThat(tokens.authenticate("slu_" + "A".repeat(43))).isEmpty();

        CountingDataSource ds = new CountingDataSource(db.dataSource());
        try (Sluice counted = Sluice.builder().dataSource(ds).schema(db.schema()).maintenance(false).build()) {
            assertThat(counted.tokens().authenticate(s)).as("the counted client works").contains(real.info());
            int before = ds.opened();
            List<String> malformed = new ArrayList<>(List.of("", "slu_", "Bearer " + s, s + " ", " " + s, s + "\n",
                    s.substring(0, 20) + "\u0000" + s.substring(21), "slu_" + "A".repeat(42) + "=", "SLU_" + s.substring(4),
                    "slu_" + "é".repeat(43), "slu_" + "A".repeat(10_000_000), s.substring(0, s.length() - 1),
                    "\u001b]0;owned\u0007" + s.substring(12), "x".repeat(47)));
            for (String m : malformed) {
                assertThat(counted.tokens().authenticate(m)).as("malformed secret of length %d", m.length()).isEmpty();
            }
            assertThat(counted.tokens().authenticate(null)).isEmpty();
            assertThat(ds.opened()).as("malformed secrets never reach the database").isEqualTo(before);
        }
    }

    @Test
    void namesAndRolesAreValidatedBeforeAnyRoundTrip() {
        for (String bad : List.of("", "Deploy", "has space", "-lead", "x".repeat(129), "bell\u0007", "nul\u0000",
                "\u001b[2J", "é")) {
            assertCode(() -> tokens.create(TokenRole.READ, bad), ErrorCode.INVALID_NAME);
        }
        assertCode(() -> tokens.create(TokenRole.READ, "12345"), ErrorCode.INVALID_NAME);
        assertThatThrownBy(() -> tokens.create(null, "no-role")).isInstanceOf(NullPointerException.class);
        assertThat(tokens.list()).noneMatch(t -> t.name().equals("no-role"));

        assertCode(() -> tokens.revoke(null), ErrorCode.INVALID_ARGUMENT);
        assertCode(() -> tokens.revoke("bad name\u001b"), ErrorCode.INVALID_NAME);
        assertCode(() -> tokens.revoke("99999999999999999999999999"), ErrorCode.TOKEN_NOT_FOUND);
        assertCode(() -> tokens.revoke("no-such-token"), ErrorCode.TOKEN_NOT_FOUND);
        assertCode(() -> tokens.revoke("0"), ErrorCode.TOKEN_NOT_FOUND);
    }

    @Test
    void rolesParseCaseInsensitivelyAndAreOrdered() {
        assertThat(TokenRole.parse("read")).isEqualTo(TokenRole.READ);
        assertThat(TokenRole.parse("WRITE")).isEqualTo(TokenRole.WRITE);
        assertThat(TokenRole.parse("Admin")).isEqualTo(TokenRole.ADMIN);
        for (String bad : List.of("", "reader", " read", "root", "\u001b[2J")) {
            assertCode(() -> TokenRole.parse(bad), ErrorCode.INVALID_ARGUMENT);
        }
        assertCode(() -> TokenRole.parse(null), ErrorCode.INVALID_ARGUMENT);
        assertThat(TokenRole.READ.text()).isEqualTo("read");
        assertThat(TokenRole.ADMIN.text()).isEqualTo("admin");
        assertThat(TokenRole.ADMIN.allows(TokenRole.READ)).isTrue();
        assertThat(TokenRole.WRITE.allows(TokenRole.WRITE)).isTrue();
        assertThat(TokenRole.WRITE.allows(TokenRole.ADMIN)).isFalse();
        assertThat(TokenRole.READ.allows(TokenRole.WRITE)).isFalse();
    }

    @Test
    void theSecretIsNeverShownOrStoredOnlyItsHash(TestDatabase db) throws Exception {
        NewToken made = tokens.create(TokenRole.ADMIN, "stored");
        String secret = made.secret();
        String body = secret.substring(4);
        assertThat(made.toString()).doesNotContain(secret).doesNotContain(body).contains("stored").contains("***");
        assertThat(made.info().toString()).doesNotContain(body);

        assertThat(strings(db, "SELECT encode(secret_hash, 'hex') FROM " + q + ".api_token WHERE id = " + made.info().id()))
                .containsExactly(java.util.HexFormat.of().formatHex(
                        MessageDigest.getInstance("SHA-256").digest(secret.getBytes(StandardCharsets.UTF_8))));
        assertThat(strings(db, "SELECT DISTINCT octet_length(secret_hash)::text FROM " + q + ".api_token"))
                .as("every row holds a 32-byte hash").containsExactly("32");
        assertThat(strings(db, "SELECT t::text FROM " + q + ".api_token t")).allSatisfy(row ->
                assertThat(row).doesNotContain(body).doesNotContain(secret));
        assertThat(new PgCatalog(db, db.schema()).columns("api_token")).containsOnlyKeys("id", "name", "role", "secret_hash",
                "created_at", "revoked_at").containsEntry("secret_hash", "bytea not null");
    }

    @Test
    void readsAnswerEmptyWithoutAControlPlaneAndWritesInstallIt(TestDatabase db) {
        String schema = db.freshSchemaName("tokens_fresh");
        try (Sluice fresh = Sluice.builder().dataSource(db.dataSource()).schema(schema).maintenance(false).build()) {
            assertThat(fresh.tokens().list()).isEmpty();
            assertThat(fresh.tokens().anyActive()).isFalse();
            assertThat(fresh.tokens().authenticate("slu_" + "A".repeat(43))).isEmpty();
            assertThat(fresh.system().get()).as("reads install nothing").isEmpty();
            NewToken t = fresh.tokens().create(TokenRole.READ, null);
            assertThat(fresh.tokens().anyActive()).isTrue();
            fresh.tokens().revoke(t.info().name());
            assertThat(fresh.tokens().anyActive()).as("revoked tokens are not active").isFalse();
        }
        String strict = db.freshSchemaName("tokens_strict");
        try (Sluice noMigrate = Sluice.builder().dataSource(db.dataSource()).schema(strict).migrate(false).maintenance(false)
                .build()) {
            assertCode(() -> noMigrate.tokens().create(TokenRole.READ, "x"), ErrorCode.SYSTEM_NOT_REGISTERED);
        }
    }
}
