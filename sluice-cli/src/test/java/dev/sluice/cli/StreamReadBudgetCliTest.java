package dev.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.StreamConfig;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.io.BufferedReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code sluice stream read} fetches within a byte budget ({@code --max-bytes}), so large payloads fit a small heap. */
@SluiceTest
class StreamReadBudgetCliTest {

    static List<Long> produce(TestDatabase db, String schema, String stream, int count, int size, boolean text) {
        List<Long> ids = new ArrayList<>();
        Random random = new Random(7);
        try (Sluice sluice = QueueCliTest.client(db, schema)) {
            sluice.stream(stream).register(StreamConfig.builder().maxPayloadBytes(64 << 20).build());
            try (Producer<byte[]> p = sluice.stream(stream).producer()) {
                for (int i = 0; i < count; i++) {
                    byte[] payload = new byte[size];
                    if (text) {
                        java.util.Arrays.fill(payload, (byte) ('a' + i));
                    } else {
                        random.nextBytes(payload);
                    }
                    ids.add(p.produce(payload).id());
                }
            }
        }
        return ids;
    }

    @Test
    void readPrintsEveryMessageInOrderAcrossBudgetedFetches(TestDatabase db) throws Exception {
        String schema = db.freshSchemaName("cli_budget");
        List<Long> ids = produce(db, schema, "s", 9, 1000, true);
        CliTest.Run read = CliTest.run(db, schema, "stream", "read", "s", "--max-bytes", "2500", "-o", "json");
        assertThat(read.exit()).as(read.err()).isZero();
        List<Long> printed = new ArrayList<>();
        for (String line : read.out().lines().toList()) {
            var node = new ObjectMapper().readTree(line);
            printed.add(node.get("id").asLong());
            assertThat(node.get("payload").asText()).hasSize(1000);
        }
        assertThat(printed).containsExactlyElementsOf(ids);
        CliTest.Run limited = CliTest.run(db, schema, "stream", "read", "s", "--max-bytes", "1", "--limit", "4");
        assertThat(limited.out().lines()).hasSize(4);

        CliTest.Run zero = CliTest.run(db, schema, "stream", "read", "s", "--max-bytes", "0");
        assertThat(zero.exit()).isEqualTo(Main.FAILURE);
        assertThat(zero.err()).contains("SLU-0015");
    }

    /**
     * Three 30 MiB payloads at -Xmx256m: all three at once (90 MiB, held hex-encoded by the driver as well)
     * do not fit; the default 16 MiB budget fetches them one at a time.
     */
    @Test
    void largePayloadsReadAtASmallHeap(TestDatabase db, @TempDir Path dir) throws Exception {
        String schema = db.freshSchemaName("cli_big");
        List<Long> ids = produce(db, schema, "big", 3, 30 << 20, false);
        Path out = dir.resolve("out.txt");
        Path err = dir.resolve("err.txt");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(java, "-Xmx256m", "-cp", System.getProperty("java.class.path"), Main.class.getName(),
                "stream", "read", "big", "--database-url", db.jdbcUrl(), "--schema", schema)
                .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        assertThat(p.waitFor(5, TimeUnit.MINUTES)).as("the read finished").isTrue();
        assertThat(p.exitValue()).as(Files.readString(err)).isZero();
        List<Long> printed = new ArrayList<>();
        try (BufferedReader r = Files.newBufferedReader(out, StandardCharsets.UTF_8)) {
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                printed.add(Long.parseLong(line.substring(0, line.indexOf(' '))));
                assertThat(line).contains(" base64:");
            }
        }
        assertThat(printed).containsExactlyElementsOf(ids);
    }
}
