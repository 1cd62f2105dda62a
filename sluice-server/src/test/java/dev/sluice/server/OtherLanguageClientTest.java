package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.io.File;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The API is usable without Java: a Python client (standard library only) produces, consumes, enqueues and works a job. */
@SluiceTest
class OtherLanguageClientTest {

    static String python() {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (Files.isExecutable(Path.of(dir, "python3"))) {
                return Path.of(dir, "python3").toString();
            }
        }
        return null;
    }

    @Test
    void aPythonClientDoesTheWholeRoundTrip(TestDatabase db, @TempDir Path dir) throws Exception {
        String python = python();
        if ("true".equals(System.getenv("CI"))) {
            assertThat(python).as("python3 is needed on CI for this test").isNotNull();
        }
        Assumptions.assumeTrue(python != null, "python3 not installed");
        Path script = dir.resolve("sluice_client.py");
        try (InputStream in = getClass().getResourceAsStream("/clients/sluice_client.py")) {
            Files.write(script, in.readAllBytes());
        }
        try (ServerFixture f = new ServerFixture(db)) {
            Process p = new ProcessBuilder(List.of(python, script.toString(), f.server.url())).redirectErrorStream(true).start();
            assertThat(p.waitFor(90, TimeUnit.SECONDS)).isTrue();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            assertThat(p.exitValue()).as(out).isZero();
            JsonNode r = Http.JSON.readTree(out.substring(out.lastIndexOf('\n') + 1));
            assertThat(r.path("produced")).hasSize(5);
            assertThat(r.path("consumed").toString()).isEqualTo("[0,1,2,3,4]");
            assertThat(r.path("run_status").asText()).isEqualTo("succeeded");
            assertThat(r.path("error_code").asText()).isEqualTo("SLU-0100");
            // and the library sees what the client did
            long last = r.path("produced").get(4).asLong();
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).until(() ->
                    f.sluice.stream("py.orders").consumerGroup("billing").get().orElseThrow().committed() == last);
            assertThat(f.sluice.queue("py.emails").run(r.path("job").asLong()).orElseThrow().result())
                    .isEqualTo("{\"sent\":true}".getBytes(StandardCharsets.UTF_8));
        }
    }
}
