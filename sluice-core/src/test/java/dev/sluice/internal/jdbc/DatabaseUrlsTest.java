package dev.sluice.internal.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.sluice.ErrorCode;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/** Database URLs: coded refusals that never show the password, postgres:// conversion, bounded timeouts. */
@SluiceTest
class DatabaseUrlsTest {
    private static final String SECRET = "s3cr3t-Pa55";

    static SluiceException refused(String url) {
        Throwable t = null;
        try {
            Sluice.builder().jdbcUrl(url);
        } catch (Throwable e) {
            t = e;
        }
        assertThat(t).as("refused: " + url).isInstanceOf(SluiceException.class);
        SluiceException e = (SluiceException) t;
        assertThat(e.code()).isEqualTo(ErrorCode.INVALID_DATABASE_URL);
        assertThat(e.getCause()).as("a cause could carry the URL").isNull();
        return e;
    }

    @Test
    void malformedUrlsAreCodedAndNeverShowThePassword() {
        PrintStream stderr = System.err;
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        List<String> messages = new CopyOnWriteArrayList<>();
        System.setErr(new PrintStream(console, true, StandardCharsets.UTF_8));
        try {
            for (String url : List.of(
                    "jdbc:postgresql://localhost:notaport/app?user=me&password=" + SECRET,
                    "jdbc:postgresql://localhost:99999/app?user=me&password=" + SECRET,
                    "jdbc:postgresql://me:" + SECRET + "@localhost/app",
                    "jdbc:postgresql://me:" + SECRET + "@localhost:5432/app?ssl=true",
                    "jdbc:mysql://localhost/app?user=me&password=" + SECRET,
                    "mysql://me:" + SECRET + "@localhost/app",
                    "jdbc:postgresql://localhost/app?user=me&PASSWORD=" + SECRET + "&loginTimeout=abc",
                    "jdbc:postgresql://localhost/app?user=me&password=" + SECRET.replace("-", "%2D") + "&loginTimeout=abc",
                    "jdbc:postgresql://localhost/app?user=me&sslpassword=" + SECRET + "&socketTimeout=x",
                    "jdbc:postgresql://localhost/app?password=" + SECRET + "&db=%ZZ",
                    "postgres://me:" + SECRET + "@localhost:notaport/app",
                    "postgresql://me:" + SECRET.replace("5", "%35") + "@localhost:0/app",
                    "postgres://me:" + SECRET + "%ZZ@localhost/app",
                    "   ")) {
                messages.add(refused(url).getMessage());
            }
        } finally {
            System.setErr(stderr);
        }
        assertThat(messages).hasSize(14).allSatisfy(m -> assertThat(m).doesNotContain(SECRET).doesNotContain("s3cr3t"));
        assertThat(console.toString(StandardCharsets.UTF_8)).as("pgjdbc logs a bad port to the console")
                .doesNotContain("s3cr3t");
        assertThat(messages.get(0)).contains("port").contains("localhost:notaport").contains("password=***");
        assertThat(messages.get(2)).contains("user=...").contains("me:***@localhost");
        assertThat(messages.get(4)).contains("jdbc:mysql:");
        assertThat(refused(null).getMessage()).contains("empty");
    }

    @Test
    void redactionCoversUserInfoParametersAndEncodings() {
        assertThat(DatabaseUrls.redact("postgres://me:" + SECRET + "@db.example:5432/app"))
                .isEqualTo("postgres://me:***@db.example:5432/app");
        assertThat(DatabaseUrls.redact("jdbc:postgresql://h/app?user=me&password=a%26b&c&ssl=true"))
                .isEqualTo("jdbc:postgresql://h/app?user=me&password=***&***&ssl=true");
        assertThat(DatabaseUrls.redact("jdbc:postgresql://h/app?pass%77ord=" + SECRET)).doesNotContain(SECRET);
        assertThat(DatabaseUrls.redact("jdbc:postgresql://h/app?user=me&x=" + "y".repeat(10_000)).length())
                .isLessThanOrEqualTo(143);
        String url = "jdbc:postgresql://h/app?user=me&password=p%40ss+word";
        assertThat(DatabaseUrls.scrub("FATAL: p@ss word and p%40ss+word and p@ss+word", url))
                .isEqualTo("FATAL: *** and *** and ***");
    }

    @Test
    void postgresUrlsAreConvertedAndConnect(TestDatabase db) throws Exception {
        Matcher m = Pattern.compile("jdbc:postgresql://([^/?]+)/([^?]+)\\?.*").matcher(db.jdbcUrl());
        assumeTrue(m.matches() && !db.external(), "the embedded test server (a role is created on it)");
        // A role whose password needs URL encoding: '@', '+', '/' and '%' must be decoded, not taken as written.
        String role = "url_test_" + Long.toHexString(System.nanoTime());
        try (java.sql.Connection admin = db.connect(); java.sql.Statement s = admin.createStatement()) {
            s.execute("CREATE ROLE " + role + " LOGIN PASSWORD 'p@ss+w/rd%'");
        }
        try {
            String url = "postgres://" + role + ":p%40ss%2Bw%2Frd%25@" + m.group(1) + "/" + m.group(2);
            assertThat(DatabaseUrls.toJdbc(url)).isEqualTo("jdbc:postgresql://" + m.group(1) + "/" + m.group(2) + "?user="
                    + role + "&password=p%40ss%2Bw%2Frd%25");
            try (java.sql.Connection c = DatabaseUrls.dataSource(url).getConnection();
                 java.sql.ResultSet rs = c.createStatement().executeQuery("SELECT current_user")) {
                rs.next();
                assertThat(rs.getString(1)).isEqualTo(role);
            }
            try (java.sql.Connection c = DatabaseUrls.dataSource("postgresql" + url.substring("postgres".length()))
                    .getConnection(); java.sql.ResultSet rs = c.createStatement().executeQuery("SELECT current_user")) {
                rs.next();
                assertThat(rs.getString(1)).as("the postgresql:// form connects too").isEqualTo(role);
            }
            String wrong = "postgres://" + role + ":wrong@" + m.group(1) + "/" + m.group(2);
            try (java.sql.Connection c = DatabaseUrls.dataSource(wrong).getConnection()) {
                throw new AssertionError("a wrong password connected");
            } catch (java.sql.SQLException refused) {
                assertThat(refused.getSQLState()).isEqualTo("28P01");
            }
        } finally {
            try (java.sql.Connection admin = db.connect(); java.sql.Statement s = admin.createStatement()) {
                s.execute("DROP ROLE " + role);
            }
        }
    }

    @Test
    void defaultsBoundTimeoutsAndTheUrlsOwnParametersWin() {
        PGSimpleDataSource plain = DatabaseUrls.dataSource("jdbc:postgresql://localhost/app");
        assertThat(plain.getConnectTimeout()).isEqualTo(10);
        assertThat(plain.getLoginTimeout()).isEqualTo(10);
        assertThat(plain.getSocketTimeout()).isEqualTo(300);
        assertThat(plain.getTcpKeepAlive()).isTrue();
        PGSimpleDataSource own = DatabaseUrls.dataSource(
                "jdbc:postgresql://localhost/app?connectTimeout=3&loginTimeout=4&socketTimeout=0&tcpKeepAlive=false");
        assertThat(own.getConnectTimeout()).isEqualTo(3);
        assertThat(own.getLoginTimeout()).isEqualTo(4);
        assertThat(own.getSocketTimeout()).isZero();
        assertThat(own.getTcpKeepAlive()).isFalse();
    }

    /** A server that accepts TCP connections and never answers: the client must give up within the login timeout. */
    @Test
    void aServerThatNeverAnswersFailsCodedWithinTheLoginTimeout() throws Exception {
        List<Socket> accepted = new CopyOnWriteArrayList<>();
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread acceptor = new Thread(() -> {
                while (!silent.isClosed()) {
                    try {
                        accepted.add(silent.accept());
                    } catch (Exception e) {
                        return;
                    }
                }
            }, "silent-server");
            acceptor.setDaemon(true);
            acceptor.start();
            String base = "jdbc:postgresql://127.0.0.1:" + silent.getLocalPort() + "/app?user=me&password=" + SECRET;
            assertUnavailableWithin(base, Duration.ofSeconds(8), Duration.ofSeconds(25));
            // The URL's own loginTimeout wins over the default.
            assertUnavailableWithin(base + "&loginTimeout=1", Duration.ZERO, Duration.ofSeconds(6));
            assertThat(accepted).as("the client did reach the server").isNotEmpty();
        } finally {
            for (Socket s : accepted) {
                s.close();
            }
        }
    }

    private static void assertUnavailableWithin(String url, Duration atLeast, Duration atMost) {
        long start = System.nanoTime();
        try (Sluice sluice = Sluice.builder().jdbcUrl(url).schema("sluice").build()) {
            assertThatThrownBy(sluice::streams).isInstanceOfSatisfying(SluiceException.class, e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.DATABASE_UNAVAILABLE);
                assertThat(e.getMessage()).doesNotContain(SECRET);
            });
        }
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertThat(took).isBetween(atLeast, atMost);
    }
}
