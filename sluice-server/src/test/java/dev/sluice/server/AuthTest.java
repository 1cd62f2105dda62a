package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.ErrorCode;
import dev.sluice.NewToken;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import dev.sluice.TokenRole;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.time.Duration;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The role matrix: no token, a wrong or revoked one → 401; a lower role → 403; open mode only on loopback. */
@SluiceTest
class AuthTest {
    static Sluice sluice;
    static SluiceServer server;
    static String read;
    static String write;
    static String admin;
    static Http anonymous;

    @BeforeAll
    static void start(TestDatabase db) {
        sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).allowDestroy(true).build();
        sluice.system().register();
        read = sluice.tokens().create(TokenRole.READ, "reader").secret();
        write = sluice.tokens().create(TokenRole.WRITE, "writer").secret();
        admin = sluice.tokens().create(TokenRole.ADMIN, "admin").secret();
        server = SluiceServer.builder(sluice).port(0).start();
        anonymous = new Http(server.url(), null);
        sluice.stream("s").register();
        sluice.stream("s").consumerGroup("g").register();
    }

    @AfterAll
    static void stop() {
        server.close();
        sluice.close();
    }

    @Test
    void withTokensNothingIsOpen() {
        assertThat(server.openMode()).isFalse();
        Http.Reply none = anonymous.get("/api/v1/streams");
        assertThat(none.status()).isEqualTo(401);
        assertThat(none.code()).isEqualTo("SLU-0600");
        assertThat(anonymous.withToken("slu_notatoken").get("/api/v1/streams").status()).isEqualTo(401);
        assertThat(anonymous.withToken(read + "x").get("/api/v1/streams").status()).isEqualTo(401);
        Http.Reply basic = anonymous.get("/api/v1/streams");
        assertThat(basic.body()).doesNotContain(read).doesNotContain(admin);
        // health and the API document need no token
        assertThat(anonymous.get("/api/v1/health").status()).isEqualTo(200);
        assertThat(anonymous.get("/api/v1/openapi.json").status()).isEqualTo(200);
        assertThat(anonymous.get("/metrics").status()).isEqualTo(401);
    }

    @Test
    void rolesAreOrdered() {
        Http r = anonymous.withToken(read);
        Http w = anonymous.withToken(write);
        Http a = anonymous.withToken(admin);
        assertThat(r.get("/api/v1/streams").status()).isEqualTo(200);
        assertThat(r.get("/metrics").status()).isEqualTo(200);
        Http.Reply produceAsReader = r.postBytes("/api/v1/streams/s/messages", new byte[] {1}, Map.of());
        assertThat(produceAsReader.status()).isEqualTo(403);
        assertThat(produceAsReader.code()).isEqualTo("SLU-0601");
        assertThat(w.postBytes("/api/v1/streams/s/messages", new byte[] {1}, Map.of()).status()).isEqualTo(201);
        assertThat(w.post("/api/v1/queues/q/jobs", Map.of("payload", 1)).status()).isEqualTo(201);
        Http.Reply registerAsWriter = w.put("/api/v1/streams/other", Map.of());
        assertThat(registerAsWriter.status()).isEqualTo(403);
        assertThat(w.post("/api/v1/streams/s/groups/g/dead:purge", Map.of("all", true)).status()).isEqualTo(403);
        assertThat(w.post("/api/v1/queues/q/dead:revive", Map.of("all", true)).status()).isEqualTo(403);
        assertThat(a.put("/api/v1/streams/other", Map.of()).status()).isEqualTo(201);
        assertThat(a.post("/api/v1/streams/s/groups/g/dead:purge", Map.of("all", true)).status()).isEqualTo(200);
        assertThat(a.get("/api/v1/whoami").json().path("role").asText()).isEqualTo("admin");
        assertThat(r.get("/api/v1/whoami").json().path("role").asText()).isEqualTo("read");
    }

    @Test
    void aRevokedTokenIsRefused() {
        NewToken t = sluice.tokens().create(TokenRole.ADMIN, "shortlived");
        Http h = anonymous.withToken(t.secret());
        assertThat(h.get("/api/v1/streams").status()).isEqualTo(200);
        sluice.tokens().revoke("shortlived");
        // verified tokens are trusted for at most two seconds
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> h.get("/api/v1/streams").status() == 401);
    }

    @Test
    void openModeOnlyOnLoopback(TestDatabase db) {
        String schema = db.freshSchemaName("open");
        try (Sluice open = Sluice.builder().dataSource(db.dataSource()).schema(schema).build()) {
            open.system().register();
            assertThatThrownBy(() -> SluiceServer.builder(open).bind("0.0.0.0").port(0).start())
                    .isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.OPEN_MODE_REFUSED));
            try (SluiceServer s = SluiceServer.builder(open).bind("127.0.0.1").port(0).start()) {
                assertThat(s.openMode()).isTrue();
                Http h = new Http(s.url(), null);
                assertThat(h.get("/api/v1/streams").status()).isEqualTo(200);
                assertThat(h.get("/api/v1/whoami").json().path("open_mode").asBoolean()).isTrue();
                // a token sent in open mode is still checked
                assertThat(h.withToken("slu_wrong").get("/api/v1/streams").status()).isEqualTo(401);
                // the first token ends open mode
                open.tokens().create(TokenRole.READ, "first");
                Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> h.get("/api/v1/streams").status() == 401);
            }
        }
    }
}
