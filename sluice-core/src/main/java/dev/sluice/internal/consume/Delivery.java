package dev.sluice.internal.consume;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sluice.Handler;
import dev.sluice.Message;
import dev.sluice.Outcome;
import dev.sluice.Serde;
import dev.sluice.internal.text.Headers;
import dev.sluice.internal.tracing.ProcessSpan;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Hands fetched messages to the handler: what is skipped (superseded by compaction, an unaccepted schema
 * version, not bound), decoding, the call itself, and the group's bindings cache; plus the reads of
 * messages ({@link MessageSql}).
 */
final class Delivery<T> {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final ConsumerContext ctx;
    private final Handler<T> handler;
    private final Serde<T> serde;
    private final Set<Integer> accept;
    /** The group's attempts: a retry on this attempt or later is a dead letter (as {@link Outcomes#decide} rules). */
    private final int maxAttempts;
    private volatile Bindings bindings;
    private volatile long bindingsValidThrough;

    Delivery(ConsumerContext ctx, Handler<T> handler, Serde<T> serde, Set<Integer> accept) {
        this.ctx = ctx;
        this.handler = handler;
        this.serde = serde;
        this.accept = accept;
        this.maxAttempts = ctx.g.config().retry().maxAttempts();
    }

    /** Whether the message needs no delivery (counted by reason). */
    boolean skip(Fetched f, Bindings b) {
        if (f.superseded()) {
            ctx.stats.skippedSuperseded.increment();
            return true;
        }
        if (accept != null && !accept.contains(f.schemaVersion())) {
            ctx.stats.skippedVersion.increment();
            return true;
        }
        if (!b.accepts(f.id(), f.routingKey())) {
            ctx.stats.skippedFiltered.increment();
            return true;
        }
        return false;
    }

    /**
     * Decodes and runs the handler (timed in {@code sluice.handler}) in the delivery's span (docs/tracing.md), current
     * while it runs; a throw is a retry, an undecodable payload is terminal.
     */
    Outcome deliver(Fetched f, int attempt, int delays) {
        Map<String, String> headers = Headers.decode(f.headersJson());
        ProcessSpan span = ctx.spans.start(f.id(), attempt, headers);
        Message<T> m;
        try {
            m = decode(f, headers, attempt, delays);
        } catch (Exception e) {
            return ended(span, undecodable(f, e), attempt);
        }
        long start = System.nanoTime();
        Outcome out;
        try (ProcessSpan.Entered entered = span.enter()) {
            Outcome o = handler.handle(m);
            out = o == null ? Outcome.success() : o;
        } catch (Throwable e) {
            span.thrown(e);
            out = thrown(f, e);
        } finally {
            ctx.stats.meters.handled(System.nanoTime() - start);
        }
        return ended(span, out, attempt);
    }

    /** Whether the handler's outcomes arrive later ({@link AsyncHandler}): a parallel range then starts each message without a thread. */
    boolean async() {
        return handler instanceof AsyncHandler;
    }

    /**
     * Starts the message on the {@link AsyncHandler} and gives its outcome to {@code done} once the stage completes
     * (on the completing thread; at once when it cannot start). The rules of {@link #deliver}; the span is current only
     * while {@code start} runs, and ends when the outcome arrives.
     */
    void deliverLater(Fetched f, int attempt, java.util.function.Consumer<Outcome> done) {
        Map<String, String> headers = Headers.decode(f.headersJson());
        ProcessSpan span = ctx.spans.start(f.id(), attempt, headers);
        Message<T> m;
        try {
            m = decode(f, headers, attempt, 0);
        } catch (Exception e) {
            done.accept(ended(span, undecodable(f, e), attempt));
            return;
        }
        long start = System.nanoTime();
        java.util.concurrent.CompletionStage<Outcome> stage;
        try (ProcessSpan.Entered entered = span.enter()) {
            stage = ((AsyncHandler<T>) handler).start(m);
        } catch (Throwable e) {
            ctx.stats.meters.handled(System.nanoTime() - start);
            span.thrown(e);
            done.accept(ended(span, thrown(f, e), attempt));
            return;
        }
        stage.whenComplete((out, e) -> {
            ctx.stats.meters.handled(System.nanoTime() - start);
            Throwable cause = e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
            if (cause != null) {
                span.thrown(cause);
            }
            done.accept(ended(span, cause != null ? thrown(f, cause) : out == null ? Outcome.success() : out, attempt));
        });
    }

    /** Ends the delivery's span with its outcome (a retry on the last attempt is a dead letter) and returns it. */
    private Outcome ended(ProcessSpan span, Outcome out, int attempt) {
        span.delivered(out, attempt >= maxAttempts);
        return out;
    }

    /** The message for the handler, counted as delivered; throws what the serde threw for an undecodable payload. */
    private Message<T> decode(Fetched f, Map<String, String> headers, int attempt, int delays) throws Exception {
        ctx.stats.delivered.increment();
        T payload = serde.deserialize(f.payload());
        return new Message<>(f.id(), payload, f.messageKey(), f.routingKey(), headers, attempt, delays, f.createdAt(),
                f.schemaVersion());
    }

    private static Outcome undecodable(Fetched f, Exception e) {
        return Outcome.terminal("undecodable payload (" + f.contentType() + "): " + e);
    }

    private Outcome thrown(Fetched f, Throwable e) {
        if (e instanceof Error && !(e instanceof AssertionError) && !(e instanceof StackOverflowError)) {
            ConsumerContext.log.error("handler threw an Error: group={} message={}", ctx.g.groupName(), f.id(), e);
        }
        return new Outcome.Retry(null, e);
    }

    /** Takes the bindings a claim read with its head, unless those cached already cover {@code claimedThrough}. */
    void claimed(long claimedThrough, String bindingsJson, long head) {
        if (claimedThrough > bindingsValidThrough) {
            bindings = parseBindings(bindingsJson);
            bindingsValidThrough = head;
        }
    }

    /**
     * The group's bindings, valid for message ids up to the head read with them: a binding change is
     * installed from the head at its registration onwards, so ids above the cached head need a fresh
     * read (and ids at or below it are classified exactly as before the change).
     */
    Bindings bindings(long upToId) {
        Bindings b = bindings;
        if (b == null || upToId > bindingsValidThrough) {
            long[] head = new long[1];
            b = ctx.db.autoCommitReplayable("read bindings", c -> {
                List<Bindings.Entry> entries = new ArrayList<>();
                try (PreparedStatement ps = c.prepareStatement(ctx.sql.bindings.bindings)) {
                    ps.setLong(1, ctx.groupId());
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            long until = rs.getLong(3);
                            Long end = rs.wasNull() ? null : until;
                            entries.add(Bindings.entry(rs.getString(1), rs.getLong(2), end));
                            head[0] = rs.getLong(4);
                        }
                    }
                }
                if (entries.isEmpty()) {
                    try (PreparedStatement ps = c.prepareStatement(ctx.sql.messages.headQuery); ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        head[0] = rs.getLong(1);
                    }
                }
                return new Bindings(entries);
            });
            bindings = b;
            bindingsValidThrough = head[0];
        }
        return b;
    }

    private static Bindings parseBindings(String json) {
        List<Bindings.Entry> entries = new ArrayList<>();
        if (json != null) {
            try {
                for (JsonNode e : JSON.readTree(json)) {
                    entries.add(Bindings.entry(e.get(0).asText(), e.get(1).asLong(), e.get(2).isNull() ? null : e.get(2).asLong()));
                }
            } catch (java.io.IOException e) {
                throw new IllegalStateException("unreadable bindings from the claim: " + e.getMessage(), e);
            }
        }
        return new Bindings(entries);
    }

    /** The messages of a range, except its resolved ids. */
    List<Fetched> fetchRange(RangeWork w) {
        return ctx.db.autoCommitReplayable("fetch a range", c -> {
            try (PreparedStatement ps = c.prepareStatement(ctx.sql.messages.fetchRange)) {
                ps.setLong(1, w.low);
                ps.setLong(2, w.high);
                ps.setArray(3, c.createArrayOf("int8", w.resolved.toArray()));
                return read(ps);
            }
        });
    }

    /** The messages of claimed rows (a row whose message retention dropped has none). */
    List<Fetched> fetchIds(Set<Long> ids) {
        return ctx.db.autoCommitReplayable("fetch claimed rows", c -> {
            try (PreparedStatement ps = c.prepareStatement(ctx.sql.messages.fetchIds)) {
                ps.setArray(1, c.createArrayOf("int8", ids.toArray()));
                return read(ps);
            }
        });
    }

    /** When a scheduled message is due (null: now). */
    static Instant deliverAt(Fetched f) {
        if (f.optionsJson() == null) {
            return null;
        }
        try {
            JsonNode at = JSON.readTree(f.optionsJson()).get("deliver_at");
            return at == null || at.isNull() ? null : Instant.parse(at.asText());
        } catch (java.io.IOException | RuntimeException e) {
            return null;
        }
    }

    private static List<Fetched> read(PreparedStatement ps) throws SQLException {
        List<Fetched> out = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                out.add(fetched(rs, 0));
            }
        }
        return out;
    }

    /** One message from the columns of {@link MessageSql#FETCH_COLUMNS}, starting after column {@code offset}. */
    static Fetched fetched(ResultSet rs, int offset) throws SQLException {
        long rank = rs.getLong(offset + 7);
        Long r = rs.wasNull() ? null : rank;
        return new Fetched(rs.getLong(offset + 1), rs.getTimestamp(offset + 2).toInstant(), rs.getInt(offset + 3),
                rs.getString(offset + 4), rs.getString(offset + 5), rs.getString(offset + 6), r, rs.getString(offset + 8),
                rs.getString(offset + 9), rs.getBytes(offset + 10), rs.getBoolean(offset + 11));
    }
}
