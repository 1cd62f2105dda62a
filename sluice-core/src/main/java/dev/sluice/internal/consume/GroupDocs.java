package dev.sluice.internal.consume;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.ConcurrencyPolicy;
import dev.sluice.DeliveryLogMode;
import dev.sluice.GroupConfig;
import dev.sluice.RetryPolicy;
import dev.sluice.StartPosition;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * A group's declaration as a sparse JSON document: only fields that differ from the defaults are
 * stored, and reading resolves the rest, so a default that changes in a later release applies to
 * groups that never set it.
 */
final class GroupDocs {
    private static final ObjectMapper JSON = new ObjectMapper();
    /**
     * The document's key for {@link GroupConfig#deadLetterRetention()} (ISO-8601); absent means the default, so
     * documents stored before the field existed read as the default. The janitor reads it in SQL.
     */
    static final String DEAD_LETTER_RETENTION = "dead_letter_retention";

    private GroupDocs() {
    }

    static String toJson(GroupConfig c) {
        Map<String, Object> doc = new LinkedHashMap<>();
        if (!(c.start() instanceof StartPosition.Beginning)) {
            Map<String, Object> start = new LinkedHashMap<>();
            if (c.start() instanceof StartPosition.Head) {
                start.put("type", "head");
            } else if (c.start() instanceof StartPosition.AtId at) {
                start.put("type", "id");
                start.put("id", at.id());
            } else if (c.start() instanceof StartPosition.AtTime at) {
                start.put("type", "time");
                start.put("time", at.time().toString());
            }
            doc.put("start", start);
        }
        if (!c.bindings().isEmpty()) {
            doc.put("bindings", c.bindings());
        }
        if (c.concurrency() != ConcurrencyPolicy.PARALLEL && !c.partitioned()) {
            doc.put("concurrency", c.concurrency().sqlValue());
        }
        if (c.partitioned()) {
            doc.put("partitions", c.partitions());
        }
        if (!c.retry().equals(RetryPolicy.DEFAULT)) {
            RetryPolicy r = c.retry();
            Map<String, Object> retry = new LinkedHashMap<>();
            retry.put("max_attempts", r.maxAttempts());
            retry.put("initial_backoff", r.initialBackoff().toString());
            retry.put("multiplier", r.multiplier());
            retry.put("max_backoff", r.maxBackoff().toString());
            retry.put("jitter", r.jitter());
            doc.put("retry", retry);
        }
        if (c.deliveryLogMode() != null) {
            doc.put("delivery_log_mode", c.deliveryLogMode().sqlValue());
        }
        if (!c.acceptVersions().isEmpty()) {
            doc.put("accept_versions", new TreeSet<>(c.acceptVersions()));
        }
        if (c.maxRangeReclaims() != 3) {
            doc.put("max_range_reclaims", c.maxRangeReclaims());
        }
        if (!c.deadLetterRetention().equals(GroupConfig.DEFAULT_DEAD_LETTER_RETENTION)) {
            doc.put(DEAD_LETTER_RETENTION, c.deadLetterRetention().toString());
        }
        try {
            return JSON.writeValueAsString(doc);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    static GroupConfig fromJson(String json) {
        try {
            JsonNode doc = JSON.readTree(json);
            GroupConfig.Builder b = GroupConfig.builder();
            JsonNode start = doc.get("start");
            if (start != null) {
                switch (start.get("type").asText()) {
                    case "head" -> b.start(StartPosition.head());
                    case "id" -> b.start(StartPosition.atId(start.get("id").asLong()));
                    case "time" -> b.start(StartPosition.atTime(Instant.parse(start.get("time").asText())));
                    default -> b.start(StartPosition.beginning());
                }
            }
            JsonNode bindings = doc.get("bindings");
            if (bindings != null) {
                List<String> list = new ArrayList<>();
                bindings.forEach(n -> list.add(n.asText()));
                b.bindings(list);
            }
            if (doc.has("concurrency")) {
                b.concurrency(ConcurrencyPolicy.parse(doc.get("concurrency").asText()));
            }
            JsonNode retry = doc.get("retry");
            if (retry != null) {
                b.retry(new RetryPolicy(retry.get("max_attempts").asInt(), Duration.parse(retry.get("initial_backoff").asText()),
                        retry.get("multiplier").asDouble(), Duration.parse(retry.get("max_backoff").asText()),
                        retry.get("jitter").asDouble()));
            }
            if (doc.has("delivery_log_mode")) {
                b.deliveryLogMode(DeliveryLogMode.parse(doc.get("delivery_log_mode").asText()));
            }
            JsonNode versions = doc.get("accept_versions");
            if (versions != null) {
                Set<Integer> set = new TreeSet<>();
                versions.forEach(n -> set.add(n.asInt()));
                b.acceptVersions(set.toArray(Integer[]::new));
            }
            if (doc.has("partitions")) {
                b.partitions(doc.get("partitions").asInt());
            }
            if (doc.has("max_range_reclaims")) {
                b.maxRangeReclaims(doc.get("max_range_reclaims").asInt());
            }
            JsonNode deadLetterRetention = doc.get(DEAD_LETTER_RETENTION);
            if (deadLetterRetention != null && !deadLetterRetention.isNull()) {
                b.deadLetterRetention(Duration.parse(deadLetterRetention.asText()));
            }
            return b.build();
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("unreadable group config " + json, e);
        }
    }
}
