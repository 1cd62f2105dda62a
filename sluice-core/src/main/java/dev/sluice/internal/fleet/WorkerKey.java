package dev.sluice.internal.fleet;

import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import dev.sluice.internal.catalog.Names;
import dev.sluice.internal.text.Echo;

/**
 * How operators name a worker (the same text in the API, the CLI and the docs): {@code manager},
 * {@code schedules}, {@code queue:<queue>}, or {@code consumer:<stream>/<group>}. Names inside follow the
 * user-name rule, which allows neither ':' nor '/', so a key reads back unambiguously.
 *
 * @param kind   {@code manager}, {@code schedules}, {@code queue} or {@code consumer}
 * @param stream the group's stream ({@code consumer} only)
 * @param name   the group ({@code consumer}), the queue ({@code queue}), else null
 */
public record WorkerKey(String kind, String stream, String name) {
    public static final String MANAGER = "manager";
    public static final String SCHEDULES = "schedules";
    public static final String QUEUE = "queue";
    public static final String CONSUMER = "consumer";

    /** The elected manager's worker. */
    public static WorkerKey manager() {
        return new WorkerKey(MANAGER, null, null);
    }

    /** The schedule runners' worker. */
    public static WorkerKey schedules() {
        return new WorkerKey(SCHEDULES, null, null);
    }

    /** A queue's workers. */
    public static WorkerKey queue(String queue) {
        return new WorkerKey(QUEUE, null, queue);
    }

    /** A consumer group's consumptions. */
    public static WorkerKey consumer(String stream, String group) {
        return new WorkerKey(CONSUMER, stream, group);
    }

    /** Whether the system owns this worker (every kind but {@code consumer}, which its group owns). */
    public boolean systemOwned() {
        return !kind.equals(CONSUMER);
    }

    /** The {@code worker_config.name} of a system-owned worker. */
    String systemName() {
        return kind.equals(QUEUE) ? "queue:" + name : kind;
    }

    /**
     * Parses an operator's key.
     *
     * @throws SluiceException {@link ErrorCode#INVALID_ARGUMENT} when it is none of the four forms
     */
    public static WorkerKey parse(String key) {
        if (key == null) {
            throw invalid("a worker key is required");
        }
        if (key.equals(MANAGER)) {
            return manager();
        }
        if (key.equals(SCHEDULES)) {
            return schedules();
        }
        try {
            if (key.startsWith(QUEUE + ":")) {
                return queue(Names.validate("queue", key.substring(QUEUE.length() + 1)));
            }
            if (key.startsWith(CONSUMER + ":")) {
                String rest = key.substring(CONSUMER.length() + 1);
                int slash = rest.indexOf('/');
                if (slash > 0) {
                    return consumer(Names.validate("stream", rest.substring(0, slash)),
                            Names.validate("consumer group", rest.substring(slash + 1)));
                }
            }
        } catch (SluiceException e) {
            throw invalid("worker key '" + Echo.of(key) + "' is not valid: " + e.problem());
        }
        throw invalid("worker key '" + Echo.of(key) + "' must be 'manager', 'schedules', 'queue:QUEUE' or 'consumer:STREAM/GROUP'");
    }

    private static SluiceException invalid(String problem) {
        return new SluiceException(ErrorCode.INVALID_ARGUMENT, problem);
    }

    @Override
    public String toString() {
        return switch (kind) {
            case QUEUE -> QUEUE + ":" + name;
            case CONSUMER -> CONSUMER + ":" + stream + "/" + name;
            default -> kind;
        };
    }
}
