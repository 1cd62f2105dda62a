package dev.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@SluiceTest
class StreamIoCliTest {

    static CliTest.Run run(TestDatabase db, String schema, String... args) {
        return CliTest.run(db, schema, args);
    }

    @Test
    void produceThenReadWithKeysHeadersAndDuplicates(TestDatabase db, @TempDir Path dir) throws Exception {
        String schema = db.freshSchemaName("cli_io");
        run(db, schema, "stream", "register", "orders");
        CliTest.Run first = run(db, schema, "stream", "produce", "orders", "--key", "customer-7", "--routing-key",
                "eu.created", "--header", "tenant=acme", "--header", "trace=abc", "--idempotency-key", "o-1", "--data", "hello world");
        assertThat(first.exit()).as(first.err()).isZero();
        assertThat(first.out().trim()).isEqualTo("1");
        CliTest.Run dup = run(db, schema, "stream", "produce", "orders", "--idempotency-key", "o-1", "--data", "again", "-o", "json");
        assertThat(dup.json().get("id").asLong()).isEqualTo(1);
        assertThat(dup.json().get("duplicate").asBoolean()).isTrue();
        Path binary = dir.resolve("blob.bin");
        Files.write(binary, new byte[] {0, 1, 2, (byte) 0xff});
        // The duplicate drew (and discarded) id 2: ids have gaps, never reuse.
        assertThat(run(db, schema, "stream", "produce", "orders", "--file", binary.toString()).out().trim()).isEqualTo("3");

        CliTest.Run text = run(db, schema, "stream", "read", "orders");
        assertThat(text.exit()).isZero();
        assertThat(text.out().lines().toList()).containsExactly(
                "1 key=customer-7 routing=eu.created headers={trace=abc, tenant=acme} hello world",
                "3 base64:AAEC/w==");

        CliTest.Run json = run(db, schema, "stream", "read", "orders", "--from", "2", "-o", "json");
        assertThat(json.exit()).isZero();
        List<JsonNode> lines = new ArrayList<>();
        for (String line : json.out().lines().toList()) {
            lines.add(new ObjectMapper().readTree(line));
        }
        assertThat(lines).hasSize(1);
        assertThat(lines.get(0).get("payload_base64").asText()).isEqualTo("AAEC/w==");
        assertThat(run(db, schema, "stream", "read", "orders", "--limit", "1").out().lines()).hasSize(1);
    }

    @Test
    void followWaitsForNewMessages(TestDatabase db) throws Exception {
        String schema = db.freshSchemaName("cli_follow");
        run(db, schema, "stream", "register", "tail");
        run(db, schema, "stream", "produce", "tail", "--data", "one");
        CompletableFuture<CliTest.Run> follow = CompletableFuture.supplyAsync(
                () -> run(db, schema, "stream", "read", "tail", "--follow", "--limit", "3"));
        Thread.sleep(500);
        assertThat(follow).isNotDone();
        run(db, schema, "stream", "produce", "tail", "--data", "two");
        run(db, schema, "stream", "produce", "tail", "--data", "three");
        CliTest.Run done = follow.get(30, TimeUnit.SECONDS);
        assertThat(done.exit()).isZero();
        assertThat(done.out().lines().toList()).containsExactly("1 one", "2 two", "3 three");
    }

    @Test
    void badInputIsCoded(TestDatabase db) {
        String schema = db.freshSchemaName("cli_io_bad");
        run(db, schema, "stream", "register", "small", "--max-payload-bytes", "4");
        CliTest.Run big = run(db, schema, "stream", "produce", "small", "--data", "too long");
        assertThat(big.exit()).isEqualTo(Main.FAILURE);
        assertThat(big.err()).contains("SLU-0004");
        assertThat(run(db, schema, "stream", "produce", "missing", "--data", "x").err()).contains("SLU-0100");
        assertThat(run(db, schema, "stream", "produce", "small", "--key", "", "--data", "x").err()).contains("SLU-0005");
        assertThat(run(db, schema, "stream", "produce", "small").exit()).isEqualTo(Main.USAGE);
        assertThat(run(db, schema, "stream", "produce", "small", "--data", "a", "--file", "b").exit()).isEqualTo(Main.USAGE);
        assertThat(run(db, schema, "stream", "read", "missing").err()).contains("SLU-0100");
    }
}
