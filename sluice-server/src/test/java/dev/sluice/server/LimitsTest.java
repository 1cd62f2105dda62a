package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Bodies are bounded (413, coded), batches capped, hostile text never echoed raw. */
@SluiceTest
class LimitsTest {
    static Sluice sluice;
    static SluiceServer server;
    static Http http;

    @BeforeAll
    static void start(TestDatabase db) {
        sluice = Sluice.builder().dataSource(db.dataSource()).schema(db.schema()).build();
        sluice.system().register();
        server = SluiceServer.builder(sluice).port(0).maxBodyBytes(64 * 1024).start();
        http = new Http(server.url(), null);
        http.put("/api/v1/streams/small", Map.of("max_payload_bytes", 1024));
    }

    @AfterAll
    static void stop() {
        server.close();
        sluice.close();
    }

    @Test
    void aPayloadOverTheStreamsLimitIs413() {
        Http.Reply r = http.postBytes("/api/v1/streams/small/messages", new byte[2048], Map.of());
        assertThat(r.status()).isEqualTo(413);
        assertThat(r.code()).isEqualTo("SLU-0004");
        assertThat(http.get("/api/v1/streams/small/messages").json().path("messages")).isEmpty();
    }

    @Test
    void aBodyOverTheServersLimitIs413WithoutBeingRead() {
        Http.Reply r = http.postBytes("/api/v1/streams/small/messages", new byte[65 * 1024], Map.of());
        assertThat(r.status()).as(r.body()).isEqualTo(413);
        assertThat(r.code()).isEqualTo("SLU-0603");
        Http.Reply json = http.post("/api/v1/streams/small/groups/g/claims" /* a JSON document: 1 MiB at most */, "{\"max\": 1, \"pad\": \"" + "x".repeat(1_100_000) + "\"}");
        assertThat(json.status()).isEqualTo(413);
    }

    @Test
    void aRefusedBodyIsDrainedSoTheAnswerArrivesAndTheConnectionStaysUsable() throws Exception {
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            InputStream in = s.getInputStream();
            out.write(("POST /api/v1/streams/small/messages HTTP/1.1\r\nHost: x\r\nContent-Length: " + (200 * 1024) + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.write(new byte[200 * 1024]); // the whole body, as a client that does not wait for 100-continue sends it
            out.flush();
            String first = response(in);
            assertThat(first).startsWith("HTTP/1.1 413").contains("SLU-0603").doesNotContainIgnoringCase("connection: close");
            out.write("GET /api/v1/streams/small HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            assertThat(response(in)).startsWith("HTTP/1.1 200"); // the same connection: the refused body was read
        }
    }

    @Test
    void aRefusedBodyFarOverTheDrainLimitClosesTheConnection() throws Exception {
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(("POST /api/v1/streams/small/messages HTTP/1.1\r\nHost: x\r\nContent-Length: "
                    + (64L << 20) + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            String answer = response(s.getInputStream());
            assertThat(answer).startsWith("HTTP/1.1 413").containsIgnoringCase("connection: close");
        }
    }

    /** One HTTP/1.1 response with a Content-Length (as every API answer has), read from a raw socket. */
    private static String response(InputStream in) throws java.io.IOException {
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            int c = in.read();
            if (c < 0) {
                throw new java.io.EOFException("closed after: " + head);
            }
            head.append((char) c);
        }
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?i)content-length: *(\\d+)").matcher(head);
        int length = m.find() ? Integer.parseInt(m.group(1)) : 0;
        return head + new String(in.readNBytes(length), StandardCharsets.UTF_8);
    }

    @Test
    void aChunkedBodyWithoutLengthIsBoundedToo() throws Exception {
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(("POST /api/v1/streams/small/messages HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            byte[] chunk = new byte[8192];
            try {
                for (int i = 0; i < 16; i++) {
                    out.write(("2000\r\n").getBytes(StandardCharsets.US_ASCII));
                    out.write(chunk);
                    out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
                }
                out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                out.flush();
            } catch (java.io.IOException closedEarly) {
                // the server may answer and close before the whole body is sent
            }
            InputStream in = s.getInputStream();
            String head = new String(in.readNBytes(12), StandardCharsets.US_ASCII);
            assertThat(head).isEqualTo("HTTP/1.1 413");
        }
    }

    @Test
    void aClientThatSendsHalfARequestIsCutOff() throws Exception {
        try (SluiceServer quick = SluiceServer.builder(sluice).port(0).idleTimeout(java.time.Duration.ofSeconds(1)).start();
             Socket s = new Socket("127.0.0.1", quick.port())) {
            s.setSoTimeout(15_000);
            s.getOutputStream().write("POST /api/v1/streams/small/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nab"
                    .getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            long start = System.nanoTime();
            byte[] answer = s.getInputStream().readAllBytes(); // ends when the server closes the connection
            assertThat(java.time.Duration.ofNanos(System.nanoTime() - start)).isLessThan(java.time.Duration.ofSeconds(12));
            assertThat(new String(answer, StandardCharsets.US_ASCII)).doesNotStartWith("HTTP/1.1 201");
        }
        assertThat(sluice.stream("small").read(0, 10, dev.sluice.ReadOptions.defaults())).isEmpty();
    }

    @Test
    void batchesAreCapped() {
        List<Map<String, Object>> many = new ArrayList<>();
        for (int i = 0; i < 1001; i++) {
            many.add(Map.of("payload", i));
        }
        Http.Reply r = http.post("/api/v1/streams/small/messages:batch", many);
        assertThat(r.status()).isEqualTo(413);
        assertThat(r.code()).isEqualTo("SLU-0603");
    }

    @Test
    void hostileNamesAreNotEchoedRaw() {
        Http.Reply r = http.get("/api/v1/streams/%1B%5B31mred%00");
        assertThat(r.status()).isEqualTo(400);
        assertThat(r.body()).doesNotContain("\u001b").doesNotContain("\u0000");
        // a header value with a control character (java.net.http refuses to send one: a raw request does)
        String answer = raw("POST /api/v1/streams/small/messages HTTP/1.1\r\nHost: x\r\nSluice-Message-Key: a\u0007b\r\n"
                + "Content-Length: 1\r\nConnection: close\r\n\r\nx");
        assertThat(answer).startsWith("HTTP/1.1 400").doesNotContain("\u0007"); // refused by the HTTP parser already
    }

    private static String raw(String request) {
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
            return new String(s.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }
}
