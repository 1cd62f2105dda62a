package dev.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.JobHandle;
import dev.sluice.LockHandle;
import dev.sluice.Queue;
import dev.sluice.QueueStats;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code sluice queue ...} and {@code sluice lock list} against the test database. */
@SluiceTest
class QueueCliTest {

    static Sluice client(TestDatabase db, String schema) {
        return Sluice.builder().jdbcUrl(db.jdbcUrl()).schema(schema).clientId("cli-test").build();
    }

    static long enqueue(TestDatabase db, String schema, String... args) {
        List<String> all = new ArrayList<>(List.of("queue", "enqueue"));
        all.addAll(List.of(args));
        CliTest.Run r = CliTest.run(db, schema, all.toArray(String[]::new));
        assertThat(r.exit()).as(r.err()).isZero();
        return Long.parseLong(r.out().trim());
    }

    @Test
    void enqueueListAndPageLiveJobs(TestDatabase db, @TempDir Path dir) throws Exception {
        String schema = db.freshSchemaName("cli_queue");
        CliTest.Run none = CliTest.run(db, schema, "queue", "list");
        assertThat(none.exit()).isZero();
        assertThat(none.out()).contains("no queues");

        long first = enqueue(db, schema, "emails", "--data", "hello", "--priority", "5", "--unique-key", "welcome-ada",
                "--header", "trace=abc", "--max-attempts", "3");
        long duplicate = enqueue(db, schema, "emails", "--data", "other", "--unique-key", "welcome-ada");
        assertThat(duplicate).as("a live job holds the key: its id, nothing written").isEqualTo(first);
        Path file = dir.resolve("payload.bin");
        Files.write(file, new byte[] {0, 1, 2});
        long fromFile = enqueue(db, schema, "emails", "--file", file.toString());
        long empty = enqueue(db, schema, "emails");
        java.io.InputStream stdin = System.in;
        try {
            System.setIn(new java.io.ByteArrayInputStream("from stdin".getBytes(StandardCharsets.UTF_8)));
            enqueue(db, schema, "piped", "-");
        } finally {
            System.setIn(stdin);
        }
        long later = enqueue(db, schema, "emails", "--data", "later", "--delay", "1h");
        CliTest.Run json = CliTest.run(db, schema, "queue", "enqueue", "emails", "--data", "at", "-o", "json",
                "--run-at", "2000-01-01T00:00:00Z", "--expires-at", "2035-01-01T00:00:00Z");
        assertThat(json.exit()).as(json.err()).isZero();
        long runAt = json.json().get("id").asLong();
        enqueue(db, schema, "reports", "--data", "r");

        CliTest.Run list = CliTest.run(db, schema, "queue", "list", "-o", "json");
        assertThat(list.exit()).isZero();
        assertThat(list.json()).hasSize(3);
        JsonNode emails = list.json().get(0);
        assertThat(emails.get("name").asText()).isEqualTo("emails");
        assertThat(emails.get("pending").asLong()).isEqualTo(5);
        assertThat(emails.get("scheduled").asLong()).isEqualTo(1);
        assertThat(emails.get("processing").asLong()).isZero();
        assertThat(CliTest.run(db, schema, "queue", "list").out()).containsPattern("QUEUE\\s+PENDING\\s+SCHEDULED\\s+PROCESSING\\s+DEAD")
                .containsPattern("emails\\s+5\\s+1\\s+0\\s+0").containsPattern("piped\\s+1\\s+0\\s+0\\s+0")
                .containsPattern("reports\\s+1\\s+0\\s+0\\s+0");

        // Pending jobs page in claim order: priority first, then run_at, then id.
        CliTest.Run page1 = CliTest.run(db, schema, "queue", "jobs", "emails", "--limit", "2", "-o", "json");
        assertThat(page1.exit()).as(page1.err()).isZero();
        JsonNode items = page1.json().get("items");
        assertThat(items).hasSize(2);
        assertThat(items.get(0).get("id").asLong()).isEqualTo(first);
        assertThat(items.get(0).get("priority").asInt()).isEqualTo(5);
        assertThat(items.get(0).get("max_attempts").asInt()).isEqualTo(3);
        assertThat(items.get(0).get("unique_key").asText()).isEqualTo("welcome-ada");
        assertThat(items.get(0).at("/headers/trace").asText()).isEqualTo("abc");
        assertThat(items.get(0).get("payload_bytes").asInt()).isEqualTo(5);
        assertThat(items.get(1).get("id").asLong()).as("run_at in 2000").isEqualTo(runAt);
        assertThat(items.get(1).get("expires_at").asText()).isEqualTo("2035-01-01T00:00:00Z");
        String next = page1.json().get("next").asText();
        CliTest.Run page2 = CliTest.run(db, schema, "queue", "jobs", "emails", "--cursor", next, "--limit", "10", "-o", "json");
        List<Long> rest = new ArrayList<>();
        page2.json().get("items").forEach(j -> rest.add(j.get("id").asLong()));
        assertThat(rest).containsExactly(fromFile, empty, later);
        assertThat(page2.json().get("next").isNull()).isTrue();
        assertThat(page2.json().get("items").get(1).get("payload_bytes").asInt()).isZero();
        CliTest.Run text = CliTest.run(db, schema, "queue", "jobs", "emails", "--limit", "1");
        assertThat(text.out()).contains("ID").contains("RUN_AT").contains("welcome-ada").contains("next page: --cursor ");

        try (Sluice sluice = client(db, schema)) {
            Queue<byte[]> q = sluice.queue("emails");
            List<JobHandle<byte[]>> claimed = q.claim(3);
            assertThat(claimed).extracting(JobHandle::id).containsExactly(first, runAt, fromFile);
            assertThat(new String(claimed.get(0).payload(), StandardCharsets.UTF_8)).isEqualTo("hello");
            assertThat(claimed.get(2).payload()).containsExactly(0, 1, 2);
            CliTest.Run processing = CliTest.run(db, schema, "queue", "jobs", "emails", "--state", "PROCESSING", "-o", "json");
            assertThat(processing.json().get("items")).hasSize(3);
            assertThat(processing.json().get("items").get(0).get("worker_id").asText()).isEqualTo("cli-test");
            assertThat(processing.json().get("items").get(0).get("state").asText()).isEqualTo("processing");
            assertThat(CliTest.run(db, schema, "queue", "jobs", "emails", "--state", "processing").out())
                    .contains("WORKER").contains("CLAIM_EXPIRES_AT").contains("cli-test");
            assertThat(q.admin().stats()).isEqualTo(new QueueStats(2, 1, 3, 0));
            assertThat(sluice.queue("piped").claim(1).get(0).payload())
                    .isEqualTo("from stdin".getBytes(StandardCharsets.UTF_8));
        }
        assertThat(CliTest.run(db, schema, "queue", "jobs", "nothing-here").out()).contains("no pending jobs in queue 'nothing-here'");
    }

    @Test
    void badInputIsACodedErrorOrAUsageErrorAndWritesNothing(TestDatabase db) {
        String schema = db.freshSchemaName("cli_queue_bad");
        CliTest.run(db, schema, "system", "register");
        expectCode(CliTest.run(db, schema, "queue", "enqueue", "q", "--data", "x", "--delay", "soon"), "SLU-0015");
        expectCode(CliTest.run(db, schema, "queue", "enqueue", "q", "--data", "x", "--run-at", "tomorrow"), "SLU-0015");
        expectCode(CliTest.run(db, schema, "queue", "enqueue", "q", "--data", "x", "--priority", "5000"), "SLU-0011");
        expectCode(CliTest.run(db, schema, "queue", "enqueue", "q", "--data", "x", "--visibility-timeout", "1ms"), "SLU-0011");
        expectCode(CliTest.run(db, schema, "queue", "enqueue", "Bad Name", "--data", "x"), "SLU-0001");
        expectCode(CliTest.run(db, schema, "queue", "enqueue", "q", "--file", "/nonexistent/payload"), "SLU-0015");
        assertThat(CliTest.run(db, schema, "queue", "enqueue", "q", "--data", "x", "--delay", "1s", "--run-at",
                "2030-01-01T00:00:00Z").exit()).isEqualTo(Main.USAGE);
        assertThat(CliTest.run(db, schema, "queue", "enqueue", "q", "--data", "x", "--file", "f").exit()).isEqualTo(Main.USAGE);
        assertThat(CliTest.run(db, schema, "queue", "enqueue", "q", "--header", "no-equals-sign").exit()).isEqualTo(Main.USAGE);
        assertThat(CliTest.run(db, schema, "queue", "list", "-o", "json").json()).as("nothing was written").isEmpty();

        expectCode(CliTest.run(db, schema, "queue", "jobs", "q", "--state", "dead"), "SLU-0011");
        expectCode(CliTest.run(db, schema, "queue", "jobs", "q", "--limit", "0"), "SLU-0011");
        expectCode(CliTest.run(db, schema, "queue", "jobs", "q", "--cursor", "not-a-cursor"), "SLU-0011");
        expectCode(CliTest.run(db, schema, "queue", "dead", "q", "--limit", "1001"), "SLU-0011");
        CliTest.Run jsonError = CliTest.run(db, schema, "queue", "jobs", "q", "--state", "bogus", "-o", "json");
        assertThat(jsonError.exit()).isEqualTo(Main.FAILURE);
        assertThat(jsonError.json().at("/error/code").asText()).isEqualTo("SLU-0011");
        assertThat(CliTest.run(db, schema, "queue", "redrive", "q").exit()).as("no id").isEqualTo(Main.USAGE);
        assertThat(CliTest.run(db, schema, "queue", "redrive", "q", "1", "--all").exit()).as("both").isEqualTo(Main.USAGE);
        assertThat(CliTest.run(db, schema, "queue", "redrive", "q", "seven").exit()).isEqualTo(Main.USAGE);
        assertThat(CliTest.run(db, schema, "queue", "revive", "q").exit()).as("former name, no id").isEqualTo(Main.USAGE);
        assertThat(CliTest.run(db, schema, "queue", "frobnicate").exit()).isEqualTo(Main.USAGE);
    }

    @Test
    void deadJobsPageRedriveAndPurge(TestDatabase db) {
        String schema = db.freshSchemaName("cli_queue_dead");
        CliTest.run(db, schema, "system", "register");
        List<Long> dead = new ArrayList<>();
        long taken;
        try (Sluice sluice = client(db, schema)) {
            Queue<byte[]> q = sluice.queue("jobs");
            for (int i = 0; i < 4; i++) {
                q.enqueue(("job-" + i).getBytes(StandardCharsets.UTF_8));
            }
            taken = q.enqueue("keyed".getBytes(StandardCharsets.UTF_8), dev.sluice.EnqueueOptions.unique("k"));
            for (JobHandle<byte[]> h : q.claim(5)) {
                h.terminal("bad input\nsecond line");
                dead.add(h.id());
            }
            // A live job now holds the unique key of the dead one.
            q.enqueue("keyed again".getBytes(StandardCharsets.UTF_8), dev.sluice.EnqueueOptions.unique("k"));
        }
        assertThat(dead).hasSize(5).contains(taken);

        CliTest.Run page1 = CliTest.run(db, schema, "queue", "dead", "jobs", "--limit", "3", "-o", "json");
        assertThat(page1.exit()).as(page1.err()).isZero();
        assertThat(page1.json().get("items")).hasSize(3);
        assertThat(page1.json().get("items").get(0).get("reason").asText()).isEqualTo("discarded");
        assertThat(page1.json().get("items").get(0).get("last_error").asText()).isEqualTo("bad input\nsecond line");
        CliTest.Run page2 = CliTest.run(db, schema, "queue", "dead", "jobs", "--cursor", page1.json().get("next").asText(), "-o", "json");
        assertThat(page2.json().get("items")).hasSize(2);
        CliTest.Run text = CliTest.run(db, schema, "queue", "dead", "jobs", "--limit", "1");
        assertThat(text.out()).contains("REASON").contains("discarded").contains("bad input second line").contains("next page: --cursor");

        // Unknown ids change nothing, even next to known ones.
        CliTest.Run unknown = CliTest.run(db, schema, "queue", "redrive", "jobs", dead.get(0).toString(), "999999");
        assertThat(unknown.exit()).isEqualTo(Main.FAILURE);
        assertThat(unknown.err()).contains("SLU-0114").contains("999999").contains("nothing was redriven");
        assertThat(deadCount(db, schema)).isEqualTo(5);
        CliTest.Run wrongQueue = CliTest.run(db, schema, "queue", "redrive", "other", dead.get(0).toString());
        assertThat(wrongQueue.err()).contains("SLU-0114");

        // The former name still works (hidden from help) and keeps its output.
        assertThat(CliTest.raw("queue", "--help").out()).contains("redrive").doesNotContain("revive");
        CliTest.Run revived = CliTest.run(db, schema, "queue", "revive", "jobs", dead.get(0).toString(), dead.get(1).toString());
        assertThat(revived.exit()).as(revived.err()).isZero();
        assertThat(revived.out()).contains("revived 2 dead jobs");
        assertThat(deadCount(db, schema)).isEqualTo(3);
        assertThat(CliTest.run(db, schema, "queue", "jobs", "jobs", "-o", "json").json().get("items"))
                .extracting(j -> j.get("id").asLong()).contains(dead.get(0), dead.get(1));
        CliTest.Run keyTaken = CliTest.run(db, schema, "queue", "redrive", "jobs", Long.toString(taken));
        assertThat(keyTaken.exit()).isEqualTo(Main.FAILURE);
        assertThat(keyTaken.err()).contains("SLU-0500");

        // Purge: confirmation and selection are usage errors; unknown ids change nothing.
        String third = dead.get(2).toString();
        assertThat(CliTest.run(db, schema, "queue", "purge", "jobs", third).exit()).isEqualTo(Main.USAGE);
        assertThat(CliTest.run(db, schema, "queue", "purge", "jobs", "--yes").exit()).isEqualTo(Main.USAGE);
        assertThat(CliTest.run(db, schema, "queue", "purge", "jobs", third, "--all", "--yes").exit()).isEqualTo(Main.USAGE);
        CliTest.Run purgeUnknown = CliTest.run(db, schema, "queue", "purge", "jobs", third, "424242", "--yes");
        assertThat(purgeUnknown.err()).contains("SLU-0114").contains("nothing was purged");
        assertThat(deadCount(db, schema)).isEqualTo(3);
        CliTest.Run purged = CliTest.run(db, schema, "queue", "purge", "jobs", third, "--yes", "-o", "json");
        assertThat(purged.json().get("purged").asInt()).isEqualTo(1);
        assertThat(deadCount(db, schema)).isEqualTo(2);
        // --all redrives what it can: the dead job whose unique key a live job holds stays dead.
        CliTest.Run all = CliTest.run(db, schema, "queue", "redrive", "jobs", "--all", "-o", "json");
        assertThat(all.exit()).as(all.err()).isZero();
        assertThat(all.json().get("redriven").asInt()).isEqualTo(1);
        assertThat(deadCount(db, schema)).isEqualTo(1);
        assertThat(CliTest.run(db, schema, "queue", "purge", "jobs", "--all", "--yes").out()).contains("purged 1 dead job");
        assertThat(CliTest.run(db, schema, "queue", "dead", "jobs").out()).contains("no dead jobs in queue 'jobs'");
    }

    @Test
    void lockListShowsHeldAndFreeLocks(TestDatabase db) {
        String schema = db.freshSchemaName("cli_lock");
        assertThat(CliTest.run(db, schema, "lock", "list").out()).contains("no locks");
        CliTest.run(db, schema, "system", "register");
        try (Sluice sluice = client(db, schema)) {
            LockHandle held = sluice.lock("nightly-report").tryAcquire(Duration.ofMinutes(5)).orElseThrow();
            sluice.lock("billing").tryAcquire(Duration.ofMinutes(5)).orElseThrow().release();

            CliTest.Run json = CliTest.run(db, schema, "lock", "list", "-o", "json");
            assertThat(json.exit()).as(json.err()).isZero();
            assertThat(json.json()).hasSize(2);
            JsonNode billing = json.json().get(0);
            assertThat(billing.get("name").asText()).isEqualTo("billing");
            assertThat(billing.get("held").asBoolean()).isFalse();
            assertThat(billing.get("owner").isNull()).isTrue();
            JsonNode report = json.json().get(1);
            assertThat(report.get("held").asBoolean()).isTrue();
            assertThat(report.get("owner").asText()).isEqualTo("cli-test");
            assertThat(report.get("fencing_token").asLong()).isEqualTo(held.fencingToken());
            assertThat(Instant.parse(report.get("expires_at").asText())).isEqualTo(held.expiresAt());

            CliTest.Run text = CliTest.run(db, schema, "lock", "list");
            assertThat(text.out()).containsPattern("NAME\\s+HELD\\s+OWNER\\s+FENCING_TOKEN\\s+ACQUIRED_AT\\s+EXPIRES_AT")
                    .containsPattern("billing\\s+no\\s+-\\s+1\\s")
                    .containsPattern("nightly-report\\s+yes\\s+cli-test\\s+1\\s");
        }
    }

    private static long deadCount(TestDatabase db, String schema) {
        return CliTest.run(db, schema, "queue", "list", "-o", "json").json().get(0).get("dead").asLong();
    }

    private static void expectCode(CliTest.Run run, String code) {
        assertThat(run.exit()).as(run.out() + run.err()).isEqualTo(Main.FAILURE);
        if (code != null) {
            assertThat(run.err()).contains(code);
        }
    }
}
