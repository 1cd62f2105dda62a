package dev.sluice.server;

import dev.sluice.embedded.test.TestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** A server over the test class's schema, started once for the class (open mode: no token exists). */
abstract class ServerTestBase {
    static ServerFixture f;
    static Http http;

    @BeforeAll
    static void startServer(TestDatabase db) {
        f = new ServerFixture(db);
        http = f.http();
    }

    @AfterAll
    static void stopServer() {
        f.close();
    }
}
