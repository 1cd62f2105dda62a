package dev.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.JobHandle;
import dev.sluice.Queue;
import dev.sluice.QueueOptions;
import dev.sluice.Sluice;
import dev.sluice.embedded.test.SluiceTest;
import dev.sluice.embedded.test.TestDatabase;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code sluice queue runs / run / await / cancel} and the enqueue flags of job runs and dependencies. */
@SluiceTest
class QueueRunsCliTest {
    static final String ESC = "\u001b";
    static final QueueOptions KEEP = QueueOptions.builder().keepRuns(Duration.ofDays(1)).build();

    static Sluice client(TestDatabase db, String schema) {
        return Sluice.builder().jdbcUrl(db.jdbcUrl()).schema(schema).clientId("cli-runs").maintenance(false).build();
    }

    static long enqueue(TestDatabase db, String schema, String... args) {
        List<String> all = new ArrayList<>(List.of("queue", "enqueue"));
        all.addAll(List.of(args));
        CliTest.Run r = CliTest.run(db, schema, all.toArray(String[]::new));
        assertThat(r.exit()).as(r.err()).isZero();
        return Long.parseLong(r.out().trim());
    }

    static void expectCode(CliTest.Run run, String code) {
        assertThat(run.exit()).as(run.out() + run.err()).isEqualTo(Main.FAILURE);
        assertThat(run.err()).as(run.err()).contains("[" + code + "]").doesNotContain("\tat ");
    }

    static List<Long> ids(JsonNode items) {
        List<Long> ids = new ArrayList<>();
        items.forEach(i -> ids.add(i.get("id").asLong()));
        return ids;
    }

    @Test
    void runsRunAwaitAndCancel(TestDatabase db) {
        String schema = db.freshSchemaName("cli_runs");
        long done = enqueue(db, schema, "reports", "--data", "hello", "--keep-runs", "1d", "--unique-key", "r-1",
                "--header", "trace=abc");
        long discarded = enqueue(db, schema, "reports", "--data", "bad", "--keep-runs", "1d", "--keep-events", "2h",
                "--header", "note=" + ESC + "]0;title" + "\u0007");
        long binary = enqueue(db, schema, "reports", "--data", "bin", "--keep-runs", "1d");
        long pending = enqueue(db, schema, "reports", "--data", "later", "--keep-runs", "1d", "--delay", "1h");
        long running;
        try (Sluice sluice = client(db, schema)) {
            Queue<String> q = sluice.queue("reports", String.class, KEEP);
            assertThat(q.claim(1).get(0).complete("done")).isTrue();
            JobHandle<String> bad = q.claim(1).get(0);
            assertThat(bad.id()).isEqualTo(discarded);
            assertThat(bad.terminal("bad input")).isTrue();
            // The library cleans the texts it writes; a row written by anyone else may still hold control characters.
            String hostile = "E'bad input \\x1b[2J\\x1b]0;owned\\x07'";
            db.execute("UPDATE " + schema + ".job_run SET last_error = " + hostile + " WHERE id = " + discarded);
            db.execute("UPDATE " + schema + ".job_event SET detail = " + hostile + " WHERE job_id = " + discarded
                    + " AND type = 'discarded'");
            JobHandle<String> raw = q.claim(1).get(0);
            assertThat(raw.complete(new byte[] {0, 1, (byte) 0xff}, "application/octet-stream")).isTrue();
            running = q.enqueue("slow");
            assertThat(q.claim(1).get(0).id()).isEqualTo(running);

            // A page of run records, newest first; JSON and text.
            CliTest.Run all = CliTest.run(db, schema, "queue", "runs", "reports", "-o", "json");
            assertThat(all.exit()).as(all.err()).isZero();
            assertThat(ids(all.json().get("items"))).containsExactly(binary, discarded, done);
            assertThat(all.json().get("next").isNull()).isTrue();
            JsonNode first = all.json().get("items").get(2);
            assertThat(first.get("status").asText()).isEqualTo("succeeded");
            assertThat(first.get("result_text").asText()).isEqualTo("done");
            assertThat(first.get("unique_key").asText()).isEqualTo("r-1");
            assertThat(first.at("/headers/trace").asText()).isEqualTo("abc");
            assertThat(first.get("worker_id").asText()).isEqualTo("cli-runs");
            assertThat(first.get("duration_ms").isNumber()).isTrue();
            assertThat(all.json().get("items").get(1).get("status").asText()).isEqualTo("discarded");
            CliTest.Run text = CliTest.run(db, schema, "queue", "runs", "reports");
            assertThat(text.exit()).as(text.err()).isZero();
            assertThat(text.out()).containsPattern("ID\\s+STATUS\\s+ATTEMPTS\\s+FINISHED\\s+DURATION\\s+WORKER\\s+REASON")
                    .containsPattern(done + "\\s+succeeded\\s+1/25\\s")
                    .contains("discarded").contains("\\x1b[2J").doesNotContain(ESC).doesNotContain("next page");

            // Filters and pages.
            CliTest.Run succeeded = CliTest.run(db, schema, "queue", "runs", "reports", "--status", "succeeded", "-o", "json");
            assertThat(ids(succeeded.json().get("items"))).containsExactly(binary, done);
            CliTest.Run two = CliTest.run(db, schema, "queue", "runs", "reports", "--status", "discarded,cancelled", "-o", "json");
            assertThat(ids(two.json().get("items"))).containsExactly(discarded);
            assertThat(ids(CliTest.run(db, schema, "queue", "runs", "reports", "--status", "DEAD", "--status", "discarded",
                    "-o", "json").json().get("items"))).containsExactly(discarded);
            assertThat(ids(CliTest.run(db, schema, "queue", "runs", "reports", "--unique-key", "r-1", "-o", "json")
                    .json().get("items"))).containsExactly(done);
            assertThat(ids(CliTest.run(db, schema, "queue", "runs", "reports", "--header", "trace=abc", "-o", "json")
                    .json().get("items"))).containsExactly(done);
            assertThat(ids(CliTest.run(db, schema, "queue", "runs", "reports", "--since", "2000-01-01T00:00:00Z",
                    "--until", "2034-01-01T00:00:00Z", "-o", "json").json().get("items"))).hasSize(3);
            assertThat(CliTest.run(db, schema, "queue", "runs", "reports", "--since", "2034-01-01T00:00:00Z").out())
                    .contains("no runs in queue 'reports'");
            List<Long> paged = new ArrayList<>();
            String cursor = null;
            do {
                List<String> args = new ArrayList<>(List.of("queue", "runs", "reports", "--limit", "1", "-o", "json"));
                if (cursor != null) {
                    args.addAll(List.of("--cursor", cursor));
                }
                CliTest.Run page = CliTest.run(db, schema, args.toArray(String[]::new));
                assertThat(page.exit()).as(page.err()).isZero();
                assertThat(page.json().get("items")).hasSize(1);
                paged.addAll(ids(page.json().get("items")));
                cursor = page.json().get("next").isNull() ? null : page.json().get("next").asText();
            } while (cursor != null && paged.size() < 10);
            assertThat(paged).containsExactly(binary, discarded, done);
            assertThat(CliTest.run(db, schema, "queue", "runs", "reports", "--limit", "1").out()).contains("next page: --cursor ");

            // One run with its trail in order; the result as text when printable, else base64.
            CliTest.Run one = CliTest.run(db, schema, "queue", "run", "reports", Long.toString(done), "-o", "json");
            assertThat(one.exit()).as(one.err()).isZero();
            assertThat(one.json().at("/run/status").asText()).isEqualTo("succeeded");
            assertThat(one.json().at("/run/result_text").asText()).isEqualTo("done");
            assertThat(one.json().at("/run/result_base64").asText())
                    .isEqualTo(Base64.getEncoder().encodeToString("done".getBytes(StandardCharsets.UTF_8)));
            JsonNode events = one.json().get("events");
            assertThat(events).hasSize(3);
            List<String> types = new ArrayList<>();
            for (int i = 0; i < events.size(); i++) {
                assertThat(events.get(i).get("seq").asInt()).isEqualTo(i + 1);
                types.add(events.get(i).get("type").asText());
            }
            assertThat(types).containsExactly("enqueued", "claimed", "succeeded");
            assertThat(events.get(1).get("worker_id").asText()).isEqualTo("cli-runs");
            CliTest.Run oneText = CliTest.run(db, schema, "queue", "run", "reports", Long.toString(done));
            assertThat(oneText.out()).containsPattern("status:\\s+succeeded").containsPattern("result:\\s+done")
                    .containsPattern("SEQ\\s+TYPE\\s+AT");
            String out = oneText.out();
            assertThat(out.indexOf("enqueued")).isLessThan(out.indexOf("claimed"));
            assertThat(out.indexOf("claimed")).isLessThan(out.lastIndexOf("succeeded"));
            CliTest.Run bin = CliTest.run(db, schema, "queue", "run", "reports", Long.toString(binary), "-o", "json");
            assertThat(bin.json().at("/run/result_base64").asText()).isEqualTo("AAH/");
            assertThat(bin.json().get("run").has("result_text")).isFalse();
            assertThat(CliTest.run(db, schema, "queue", "run", "reports", Long.toString(binary)).out())
                    .containsPattern("result_base64:\\s+AAH/");
            CliTest.Run badRun = CliTest.run(db, schema, "queue", "run", "reports", Long.toString(discarded));
            assertThat(badRun.out()).contains("discarded").contains("\\x1b]0;owned\\x07").contains("note=\\x1b]0;title\\x07")
                    .doesNotContain(ESC).doesNotContain("\u0007");
            assertThat(badRun.out()).as("the event's detail is escaped too").containsPattern("discarded .*bad input \\\\x1b\\[2J");
            CliTest.Run badJson = CliTest.run(db, schema, "queue", "run", "reports", Long.toString(discarded), "-o", "json");
            assertThat(badJson.out()).doesNotContain(ESC);
            assertThat(badJson.json().at("/run/last_error").asText()).isEqualTo("bad input " + ESC + "[2J" + ESC + "]0;owned\u0007");
            assertThat(badJson.json().at("/run/headers/note").asText()).isEqualTo(ESC + "]0;title\u0007");
            assertThat(badJson.json().at("/events/2/detail").asText()).startsWith("bad input " + ESC);
            CliTest.Run live = CliTest.run(db, schema, "queue", "run", "reports", Long.toString(pending), "-o", "json");
            assertThat(live.json().at("/run/status").asText()).isEqualTo("pending");
            assertThat(live.json().at("/run/finished_at").isNull()).isTrue();
            assertThat(live.json().get("events")).hasSize(1);
            expectCode(CliTest.run(db, schema, "queue", "run", "reports", "999999"), "SLU-0114");

            // Await: an ended job answers at once; a live one times out with a coded error.
            CliTest.Run awaited = CliTest.run(db, schema, "queue", "await", "reports", Long.toString(done), "-o", "json");
            assertThat(awaited.exit()).as(awaited.err()).isZero();
            assertThat(awaited.json().get("status").asText()).isEqualTo("succeeded");
            assertThat(awaited.json().get("result_text").asText()).isEqualTo("done");
            assertThat(CliTest.run(db, schema, "queue", "await", "reports", Long.toString(done)).out())
                    .containsPattern("status:\\s+succeeded");
            expectCode(CliTest.run(db, schema, "queue", "await", "reports", Long.toString(pending), "--timeout", "100ms"),
                    "SLU-0121");
            CliTest.Run timeoutJson = CliTest.run(db, schema, "queue", "await", "reports", Long.toString(pending),
                    "--timeout", "100ms", "-o", "json");
            assertThat(timeoutJson.exit()).isEqualTo(Main.FAILURE);
            assertThat(timeoutJson.json().at("/error/code").asText()).isEqualTo("SLU-0121");
            expectCode(CliTest.run(db, schema, "queue", "await", "reports", "999999", "--timeout", "0s"), "SLU-0114");

            // Cancel: pending at once, then already ended; a running job is flagged; an unknown id is not found.
            CliTest.Run cancelled = CliTest.run(db, schema, "queue", "cancel", "reports", Long.toString(pending));
            assertThat(cancelled.exit()).as(cancelled.err()).isZero();
            assertThat(cancelled.out()).contains("cancelled job " + pending);
            CliTest.Run again = CliTest.run(db, schema, "queue", "cancel", "reports", Long.toString(pending), "-o", "json");
            assertThat(again.json().get("id").asLong()).isEqualTo(pending);
            assertThat(again.json().get("result").asText()).isEqualTo("already_ended");
            assertThat(CliTest.run(db, schema, "queue", "cancel", "reports", Long.toString(pending)).out()).contains("already ended");
            CliTest.Run requested = CliTest.run(db, schema, "queue", "cancel", "reports", Long.toString(running), "-o", "json");
            assertThat(requested.json().get("result").asText()).isEqualTo("requested");
            expectCode(CliTest.run(db, schema, "queue", "cancel", "reports", "999999"), "SLU-0114");
            CliTest.Run notFoundJson = CliTest.run(db, schema, "queue", "cancel", "reports", "999999", "-o", "json");
            assertThat(notFoundJson.json().at("/error/code").asText()).isEqualTo("SLU-0114");
            CliTest.Run cancelledRuns = CliTest.run(db, schema, "queue", "runs", "reports", "--status", "cancelled", "-o", "json");
            assertThat(ids(cancelledRuns.json().get("items"))).containsExactly(pending);
            CliTest.Run awaitCancelled = CliTest.run(db, schema, "queue", "await", "reports", Long.toString(pending), "-o", "json");
            assertThat(awaitCancelled.json().get("status").asText()).isEqualTo("cancelled");
        }
    }

    @Test
    void parentsWaitingJobsAndUnknownParents(TestDatabase db) {
        String schema = db.freshSchemaName("cli_runs_after");
        long p1 = enqueue(db, schema, "etl", "--data", "extract", "--keep-runs", "1h");
        long p2 = enqueue(db, schema, "etl", "--data", "transform", "--keep-runs", "1h");
        long p3 = enqueue(db, schema, "etl", "--data", "check", "--keep-runs", "1h");
        long child = enqueue(db, schema, "load", "--data", "load", "--after", p1 + "," + p2, "--after", Long.toString(p3),
                "--on-parent-failure", "run");
        CliTest.Run waiting = CliTest.run(db, schema, "queue", "jobs", "load", "--state", "waiting", "-o", "json");
        assertThat(waiting.exit()).as(waiting.err()).isZero();
        assertThat(ids(waiting.json().get("items"))).containsExactly(child);
        assertThat(waiting.json().at("/items/0/state").asText()).isEqualTo("waiting");
        assertThat(CliTest.run(db, schema, "queue", "jobs", "load", "--state", "WAITING").out()).contains("RUN_AT")
                .containsPattern("(?m)^" + child + "\\s");
        assertThat(CliTest.run(db, schema, "queue", "jobs", "load").out()).contains("no pending jobs");
        assertThat(CliTest.run(db, schema, "queue", "run", "load", Long.toString(child), "-o", "json").json()
                .at("/run/status").asText()).isEqualTo("waiting");

        try (Sluice sluice = client(db, schema)) {
            Queue<String> etl = sluice.queue("etl", String.class, KEEP);
            assertThat(etl.claim(1).get(0).complete("ok")).isTrue();
            assertThat(etl.claim(1).get(0).complete("ok")).isTrue();
            assertThat(etl.claim(1).get(0).terminal("bad data")).isTrue();
        }
        // The last parent failed, and the child's policy is run: it is pending now.
        assertThat(CliTest.run(db, schema, "queue", "jobs", "load", "--state", "waiting").out()).contains("no waiting jobs");
        assertThat(ids(CliTest.run(db, schema, "queue", "jobs", "load", "-o", "json").json().get("items")))
                .containsExactly(child);

        // Unknown parents write nothing.
        expectCode(CliTest.run(db, schema, "queue", "enqueue", "load", "--data", "x", "--after", "999999"), "SLU-0122");
        expectCode(CliTest.run(db, schema, "queue", "enqueue", "load", "--data", "x", "--after", p1 + ",999998"), "SLU-0122");
        expectCode(CliTest.run(db, schema, "queue", "enqueue", "load", "--data", "x", "--after", "1,abc"), "SLU-0015");
        expectCode(CliTest.run(db, schema, "queue", "enqueue", "load", "--data", "x", "--after", "99999999999999999999"),
                "SLU-0015");
        expectCode(CliTest.run(db, schema, "queue", "enqueue", "load", "--data", "x", "--after", "0"), "SLU-0011");
        expectCode(CliTest.run(db, schema, "queue", "enqueue", "load", "--data", "x", "--after", Long.toString(p1),
                "--on-parent-failure", "bogus"), "SLU-0011");
        assertThat(CliTest.run(db, schema, "queue", "list", "-o", "json").json().get(1).get("pending").asLong())
                .as("nothing was written to 'load'").isEqualTo(1);
    }

    @Test
    void badInputIsACodedErrorOrAUsageError(TestDatabase db) {
        String schema = db.freshSchemaName("cli_runs_bad");
        CliTest.run(db, schema, "system", "register");
        expectCode(CliTest.run(db, schema, "queue", "runs", "q", "--status", "bogus"), "SLU-0015");
        expectCode(CliTest.run(db, schema, "queue", "runs", "q", "--status", "pending"), "SLU-0015");
        expectCode(CliTest.run(db, schema, "queue", "runs", "q", "--limit", "0"), "SLU-0015");
        expectCode(CliTest.run(db, schema, "queue", "runs", "q", "--limit", "1001"), "SLU-0015");
        expectCode(CliTest.run(db, schema, "queue", "runs", "q", "--cursor", "not-a-cursor"), "SLU-0015");
        expectCode(CliTest.run(db, schema, "queue", "runs", "q", "--since", "yesterday"), "SLU-0015");
        expectCode(CliTest.run(db, schema, "queue", "runs", "q", "--since", "2026-01-02T00:00:00Z", "--until",
                "2026-01-01T00:00:00Z"), "SLU-0015");
        expectCode(CliTest.run(db, schema, "queue", "runs", "Bad Name"), "SLU-0001");
        CliTest.Run jsonError = CliTest.run(db, schema, "queue", "runs", "q", "--status", "bogus", "-o", "json");
        assertThat(jsonError.json().at("/error/code").asText()).isEqualTo("SLU-0015");
        assertThat(CliTest.run(db, schema, "queue", "runs", "q", "--header", "no-equals-sign").exit()).isEqualTo(Main.USAGE);
        assertThat(CliTest.run(db, schema, "queue", "runs", "q", "--header", "a=1", "--header", "b=2").exit())
                .isEqualTo(Main.USAGE);
        assertThat(CliTest.run(db, schema, "queue", "runs", "q", "--limit", "many").exit()).isEqualTo(Main.USAGE);
        assertThat(CliTest.run(db, schema, "queue", "runs", "q").out()).contains("no runs in queue 'q'").contains("--keep-runs");

        expectCode(CliTest.run(db, schema, "queue", "enqueue", "q", "--data", "x", "--keep-runs", "-1s"), "SLU-0015");
        expectCode(CliTest.run(db, schema, "queue", "enqueue", "q", "--data", "x", "--keep-runs", "soon"), "SLU-0015");
        expectCode(CliTest.run(db, schema, "queue", "enqueue", "q", "--data", "x", "--keep-runs", "0s"), "SLU-0011");
        expectCode(CliTest.run(db, schema, "queue", "enqueue", "q", "--data", "x", "--keep-runs", "3651d"), "SLU-0011");
        expectCode(CliTest.run(db, schema, "queue", "enqueue", "q", "--data", "x", "--keep-events", "1h"), "SLU-0011");
        expectCode(CliTest.run(db, schema, "queue", "enqueue", "q", "--data", "x", "--keep-runs", "1d", "--keep-events",
                "PT-1H"), "SLU-0015");
        assertThat(CliTest.run(db, schema, "queue", "list", "-o", "json").json()).as("nothing was written").isEmpty();

        expectCode(CliTest.run(db, schema, "queue", "await", "q", "1", "--timeout", "-1s"), "SLU-0015");
        expectCode(CliTest.run(db, schema, "queue", "await", "q", "1", "--timeout", "2d"), "SLU-0015");
        expectCode(CliTest.run(db, schema, "queue", "await", "q", "1", "--timeout", "0s"), "SLU-0114");
        expectCode(CliTest.run(db, schema, "queue", "run", "q", "1"), "SLU-0114");
        assertThat(CliTest.run(db, schema, "queue", "run", "q", "seven").exit()).isEqualTo(Main.USAGE);
        assertThat(CliTest.run(db, schema, "queue", "run", "q").exit()).isEqualTo(Main.USAGE);
        assertThat(CliTest.run(db, schema, "queue", "cancel", "q").exit()).isEqualTo(Main.USAGE);
        assertThat(CliTest.run(db, schema, "queue", "await", "q", "1", "2").exit()).isEqualTo(Main.USAGE);
        for (String cmd : List.of("runs", "run", "await", "cancel")) {
            CliTest.Run help = CliTest.raw("queue", cmd, "--help");
            assertThat(help.exit()).as(cmd).isZero();
            assertThat(help.out()).contains("Usage: sluice queue " + cmd);
        }
        assertThat(CliTest.raw("queue", "enqueue", "-h").out()).contains("--keep-runs").contains("--keep-events")
                .contains("--after").contains("--on-parent-failure");
        assertThat(CliTest.raw("queue", "--help").out()).contains("runs").contains("await").contains("cancel");
    }
}
