package dev.sluice.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.ConcurrencyPolicy;
import dev.sluice.GroupConfig;
import dev.sluice.ProduceOptions;
import dev.sluice.Producer;
import dev.sluice.embedded.test.SluiceTest;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Pull consumption over HTTP keeps a handler's guarantees: every message is delivered until it has an outcome,
 * a lease that runs out redelivers (counting the attempt), a late outcome is refused, exclusive keys hold.
 */
@SluiceTest
class PullClaimTest extends ServerTestBase {
    private static void produce(String stream, int n, String keyPrefix, int keys) {
        try (Producer<String> p = f.sluice.stream(stream, String.class).producer()) {
            for (int i = 0; i < n; i++) {
                p.produce("m" + i, keys == 0 ? ProduceOptions.NONE : ProduceOptions.key(keyPrefix + (i % keys)));
            }
        }
    }

    private static JsonNode claim(String stream, String group, int max, String wait, String lease) {
        Http.Reply r = http.post("/api/v1/streams/" + stream + "/groups/" + group + "/claims",
                Map.of("max", max, "wait", wait, "lease", lease));
        assertThat(r.status()).as(r.body()).isEqualTo(200);
        return r.json();
    }

    private static Http.Reply outcomes(String stream, String group, String claim, List<Map<String, Object>> outcomes) {
        return http.post("/api/v1/streams/" + stream + "/groups/" + group + "/claims/" + claim + "/outcomes",
                Map.of("outcomes", outcomes));
    }

    private static List<Map<String, Object>> all(JsonNode claim, String outcome) {
        List<Map<String, Object>> out = new ArrayList<>();
        claim.path("messages").forEach(m -> out.add(Map.of("id", m.path("id").asLong(), "outcome", outcome)));
        return out;
    }

    /**
     * Claims until {@code n} messages are out (the consumption hands a range over message by message, so under load
     * they may come in more than one claim); message id → the claim holding it, in delivery order.
     */
    private static Map<Long, String> claimAll(String stream, String group, int n, String lease) {
        Map<Long, String> held = new java.util.LinkedHashMap<>();
        for (int i = 0; i < 20 && held.size() < n; i++) {
            JsonNode c = claim(stream, group, n, "5s", lease);
            for (JsonNode m : c.path("messages")) {
                assertThat(m.path("attempt").asInt()).isEqualTo(1);
                held.put(m.path("id").asLong(), c.path("claim").asText());
            }
        }
        assertThat(held).hasSize(n);
        return held;
    }

    @Test
    void everyMessageOnceWithSuccessAndTheGroupCatchesUp() {
        f.sluice.stream("p1").register();
        f.sluice.stream("p1").consumerGroup("g").register();
        produce("p1", 250, null, 0);
        Set<Long> seen = new HashSet<>();
        while (seen.size() < 250) {
            JsonNode c = claim("p1", "g", 100, "5s", "30s");
            assertThat(c.path("messages").size()).isPositive();
            c.path("messages").forEach(m -> assertThat(seen.add(m.path("id").asLong())).isTrue());
            Http.Reply r = outcomes("p1", "g", c.path("claim").asText(), all(c, "success"));
            assertThat(r.json().path("accepted").asInt()).isEqualTo(c.path("messages").size());
        }
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30))
                .until(() -> f.sluice.stream("p1").consumerGroup("g").get().orElseThrow().lag() == 0);
        JsonNode empty = claim("p1", "g", 10, "200ms", "30s");
        assertThat(empty.path("claim").isNull()).isTrue();
        assertThat(empty.path("messages")).isEmpty();
    }

    /** Threads waiting inside a handler call of a bridge (blocked until an outcome arrives). */
    private static long threadsWaitingForAnOutcome() {
        return Thread.getAllStackTraces().entrySet().stream().filter(e -> e.getKey().getState() != Thread.State.RUNNABLE)
                .filter(e -> java.util.Arrays.stream(e.getValue()).anyMatch(fr -> fr.getClassName().startsWith("dev.sluice.server.pull.GroupBridge")
                        || fr.getClassName().equals("dev.sluice.internal.consume.AsyncHandler")))
                .count();
    }

    @Test
    void aParallelGroupsMessagesOutHoldNoThread() {
        f.sluice.stream("p0").register();
        f.sluice.stream("p0").consumerGroup("g").register();
        produce("p0", 300, null, 0);
        Map<Long, String> held = claimAll("p0", "g", 300, "30s");
        // 300 messages out, no outcome given yet: none of them holds a thread (a blocked handler call each would be 300).
        assertThat(threadsWaitingForAnOutcome()).isLessThan(10);
        Map<String, List<Map<String, Object>>> byClaim = new java.util.LinkedHashMap<>();
        held.forEach((id, claim) -> byClaim.computeIfAbsent(claim, k -> new ArrayList<>()).add(Map.of("id", id, "outcome", "success")));
        byClaim.forEach((claim, list) -> assertThat(outcomes("p0", "g", claim, list).status()).isEqualTo(200));
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30))
                .until(() -> f.sluice.stream("p0").consumerGroup("g").get().orElseThrow().lag() == 0);
    }

    @Test
    void anExpiredLeaseRedeliversAndALateOutcomeIsRefused() {
        f.sluice.stream("p2").register();
        f.sluice.stream("p2").consumerGroup("g").register();
        produce("p2", 3, null, 0);
        Map<Long, String> held = claimAll("p2", "g", 3, "3s");
        // Leases end without an outcome: the claims are gone, the messages come again with their attempt counted.
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(15)).until(() -> f.server.pull().liveClaims() == 0);
        for (String claimId : new HashSet<>(held.values())) {
            assertThat(http.post("/api/v1/streams/p2/groups/g/claims/" + claimId + ":renew", Map.of()).code()).isEqualTo("SLU-0605");
            Http.Reply late = outcomes("p2", "g", claimId, List.of(Map.of("id", held.keySet().iterator().next(), "outcome", "success")));
            assertThat(late.status()).isEqualTo(409);
            assertThat(late.code()).isEqualTo("SLU-0605");
        }
        Set<Long> again = new HashSet<>();
        int attempt = 0;
        while (again.size() < 3) {
            JsonNode c2 = claim("p2", "g", 10, "10s", "30s");
            for (JsonNode m : c2.path("messages")) {
                again.add(m.path("id").asLong());
                attempt = Math.max(attempt, m.path("attempt").asInt());
            }
            outcomes("p2", "g", c2.path("claim").asText(), all(c2, "success"));
        }
        assertThat(attempt).isEqualTo(2);
    }

    @Test
    void renewKeepsAClaimAndOutcomesOfEveryKind() {
        f.sluice.stream("p3").register();
        f.sluice.stream("p3").consumerGroup("g").register(GroupConfig.builder()
                .retry(dev.sluice.RetryPolicy.DEFAULT.withMaxAttempts(3)).build());
        produce("p3", 4, null, 0);
        Map<Long, String> held = claimAll("p3", "g", 4, "2s");
        for (String claimId : new HashSet<>(held.values())) {
            Http.Reply renewed = http.post("/api/v1/streams/p3/groups/g/claims/" + claimId + ":renew", Map.of("lease", "60s"));
            assertThat(renewed.status()).isEqualTo(200);
            assertThat(renewed.json().path("expires_at").asText()).isNotEmpty();
        }
        List<Long> ids = new ArrayList<>(held.keySet());
        // past the first lease of 2 s: the renewals hold
        org.awaitility.Awaitility.await().pollDelay(java.time.Duration.ofMillis(2500)).until(() -> true);
        for (int i = 0; i < 3; i++) {
            Map<String, Object> o = switch (i) {
                case 0 -> Map.of("id", ids.get(0), "outcome", "success");
                case 1 -> Map.of("id", ids.get(1), "outcome", "terminal", "reason", "poison");
                default -> Map.of("id", ids.get(2), "outcome", "retry", "after", "100ms");
            };
            Http.Reply r = outcomes("p3", "g", held.get(ids.get(i)), List.of(o, Map.of("id", 999_999, "outcome", "success")));
            assertThat(r.status()).as(r.body()).isEqualTo(200);
            assertThat(r.json().path("accepted").asInt()).isEqualTo(1);
            assertThat(r.json().path("unknown").get(0).asLong()).isEqualTo(999_999);
        }
        String claimId = held.get(ids.get(3));
        assertThat(outcomes("p3", "g", claimId, List.of(Map.of("id", ids.get(3), "outcome", "maybe"))).code()).isEqualTo("SLU-0604");
        assertThat(outcomes("p3", "g", claimId, List.of(Map.of("id", ids.get(3), "outcome", "delay", "after", "100ms"))).status())
                .isEqualTo(200);
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30))
                .until(() -> f.sluice.stream("p3").consumerGroup("g").get().orElseThrow().dead() == 1);
        // the retried and the delayed messages come back
        Set<Long> back = new HashSet<>();
        while (back.size() < 2) {
            JsonNode c2 = claim("p3", "g", 10, "10s", "30s");
            c2.path("messages").forEach(m -> back.add(m.path("id").asLong()));
            outcomes("p3", "g", c2.path("claim").asText(), all(c2, "success"));
        }
        assertThat(back).containsExactlyInAnyOrder(ids.get(2), ids.get(3));
    }

    @Test
    void exclusiveGroupsHandOutOneMessageOfAKeyAtATime() {
        f.sluice.stream("p4").register();
        f.sluice.stream("p4").consumerGroup("g").register(GroupConfig.builder().concurrency(ConcurrencyPolicy.EXCLUSIVE).build());
        produce("p4", 12, "k", 3); // keys k0, k1, k2: 4 messages each
        // While the first claim holds one message of each key, a second claim gets nothing.
        JsonNode first = claim("p4", "g", 100, "10s", "30s");
        Set<String> firstKeys = new HashSet<>();
        first.path("messages").forEach(m -> assertThat(firstKeys.add(m.path("message_key").asText())).isTrue());
        JsonNode second = claim("p4", "g", 100, "1s", "30s");
        for (JsonNode m : second.path("messages")) {
            assertThat(firstKeys).as("a key held by the first claim was handed out again").doesNotContain(m.path("message_key").asText());
        }
        Set<Long> done = new HashSet<>();
        List<Long> order = new ArrayList<>();
        first.path("messages").forEach(m -> { done.add(m.path("id").asLong()); order.add(m.path("id").asLong()); });
        second.path("messages").forEach(m -> { done.add(m.path("id").asLong()); order.add(m.path("id").asLong()); });
        outcomes("p4", "g", first.path("claim").asText(), all(first, "success"));
        if (second.path("claim").isTextual()) {
            outcomes("p4", "g", second.path("claim").asText(), all(second, "success"));
        }
        while (done.size() < 12) {
            JsonNode c = claim("p4", "g", 100, "10s", "30s");
            Set<String> keys = new HashSet<>();
            for (JsonNode m : c.path("messages")) {
                // never two messages of one key out at the same time
                assertThat(keys.add(m.path("message_key").asText())).as("key %s twice in one claim", m.path("message_key")).isTrue();
                order.add(m.path("id").asLong());
                done.add(m.path("id").asLong());
            }
            outcomes("p4", "g", c.path("claim").asText(), all(c, "success"));
        }
        assertThat(order).hasSize(12);
    }

    @Test
    void aClaimCarriesThePreviousClaimsOutcomes() {
        f.sluice.stream("p6").register();
        f.sluice.stream("p6").consumerGroup("g").register();
        produce("p6", 30, null, 0);
        Set<Long> seen = new HashSet<>();
        Map<String, Object> resolve = null;
        while (seen.size() < 30) {
            Map<String, Object> body = new java.util.LinkedHashMap<>(Map.of("max", 10, "wait", "5s", "lease", "30s"));
            if (resolve != null) {
                body.put("resolve", resolve);
            }
            Http.Reply r = http.post("/api/v1/streams/p6/groups/g/claims", body);
            assertThat(r.status()).as(r.body()).isEqualTo(200);
            JsonNode c = r.json();
            if (resolve != null) {
                assertThat(c.path("resolved").path("accepted").asInt()).isEqualTo(((List<?>) resolve.get("outcomes")).size());
                assertThat(c.path("resolved").path("claim").asText()).isEqualTo(resolve.get("claim"));
            }
            c.path("messages").forEach(m -> assertThat(seen.add(m.path("id").asLong())).isTrue());
            resolve = c.path("claim").isTextual() ? Map.of("claim", c.path("claim").asText(), "outcomes", all(c, "success")) : null;
        }
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> last = (List<Map<String, Object>>) resolve.get("outcomes");
        assertThat(outcomes("p6", "g", (String) resolve.get("claim"), last).status()).isEqualTo(200);
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30))
                .until(() -> f.sluice.stream("p6").consumerGroup("g").get().orElseThrow().lag() == 0);
        // outcomes for a claim that is not held: the whole request is refused, nothing is claimed
        Http.Reply refused = http.post("/api/v1/streams/p6/groups/g/claims", Map.of("max", 1, "resolve",
                Map.of("claim", "gone", "outcomes", List.of(Map.of("id", 1, "outcome", "success")))));
        assertThat(refused.code()).isEqualTo("SLU-0605");
    }

    @Test
    void badClaimRequests() {
        f.sluice.stream("p5").register();
        assertThat(http.post("/api/v1/streams/p5/groups/nope/claims", Map.of("max", 1)).code()).isEqualTo("SLU-0108");
        assertThat(http.post("/api/v1/streams/p5/groups/g/claims", Map.of("max", 0)).code()).isEqualTo("SLU-0604");
        assertThat(http.post("/api/v1/streams/p5/groups/g/claims", Map.of("max", 1, "wait", "10m")).code()).isEqualTo("SLU-0604");
        assertThat(http.post("/api/v1/streams/p5/groups/g/claims", Map.of("max", 1, "lease", "1ms")).code()).isEqualTo("SLU-0604");
        assertThat(http.post("/api/v1/streams/p5/groups/g/claims/nope:renew", Map.of()).code()).isEqualTo("SLU-0605");
        assertThat(http.post("/api/v1/streams/p5/groups/g/claims/nope/outcomes", Map.of("outcomes", List.of(
                Map.of("id", 1, "outcome", "success")))).code()).isEqualTo("SLU-0605");
    }
}
