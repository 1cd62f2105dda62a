package dev.sluice;

import java.time.Instant;
import java.util.Map;

/**
 * A message delivered to a {@link Handler}.
 *
 * @param id            position in the stream's log
 * @param payload       the decoded payload
 * @param messageKey    message key or {@code null}
 * @param routingKey    routing key or {@code null}
 * @param headers       headers (empty when none)
 * @param attempt       which delivery this is, from 1 (delays do not count)
 * @param delays        how many times a handler delayed it
 * @param producedAt    when it was produced
 * @param schemaVersion the payload's schema version
 */
public record Message<T>(long id, T payload, String messageKey, String routingKey, Map<String, String> headers,
                         int attempt, int delays, Instant producedAt, int schemaVersion) {
}
