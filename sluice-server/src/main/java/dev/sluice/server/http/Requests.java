package dev.sluice.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import dev.sluice.internal.text.Echo;
import dev.sluice.server.json.Inputs;
import io.javalin.http.Context;
import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;

/**
 * Reading requests without trusting them: bodies are read up to a limit (413 past it, whatever the
 * Content-Length claims), query parameters and JSON fields are checked for type and range, durations
 * take the CLI's forms ({@code 500ms}, {@code 90s}, {@code 15m}, {@code 24h}, {@code 7d}, ISO-8601).
 */
public final class Requests {
    /** The largest JSON document a route that takes one reads (a batch of messages has its own limit). */
    public static final int MAX_JSON_BYTES = 1 << 20;

    private Requests() {
    }

    /**
     * The most of a refused body that is read and thrown away before the 413 goes out. A client that is still
     * sending when the server closes gets a connection reset instead of the answer (and loses the 413 already in
     * its receive buffer); reading a bounded rest lets the answer arrive and keeps the connection usable. Past it,
     * the connection is closed.
     */
    static final long DRAIN_BYTES = 1 << 20;
    private static final long DRAIN_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(2);

    /** The body, at most {@code limit} bytes; REQUEST_TOO_LARGE (413) past it, without keeping the rest. */
    public static byte[] body(Context ctx, long limit) {
        long declared = ctx.req().getContentLengthLong();
        try (InputStream in = ctx.req().getInputStream()) {
            if (declared > limit) {
                throw refuse(ctx, in, limit, declared);
            }
            byte[] out = in.readNBytes((int) Math.min(Integer.MAX_VALUE - 8, limit + 1));
            if (out.length > limit) {
                throw refuse(ctx, in, limit, declared < 0 ? -1 : declared - out.length);
            }
            return out;
        } catch (IOException e) {
            throw new SluiceException(ErrorCode.MALFORMED_REQUEST, "the request body could not be read: "
                    + e.getClass().getSimpleName());
        }
    }

    /**
     * The 413, after reading and dropping at most {@link #DRAIN_BYTES} of the body's {@code rest} (-1: unknown)
     * within {@link #DRAIN_NANOS}; when more is left, the answer closes the connection.
     */
    private static SluiceException refuse(Context ctx, InputStream in, long limit, long rest) throws IOException {
        boolean drained = false;
        if (rest <= DRAIN_BYTES) {
            byte[] sink = new byte[8192];
            long left = DRAIN_BYTES + 1;
            long until = System.nanoTime() + DRAIN_NANOS;
            int n = 0;
            while (left > 0 && System.nanoTime() < until && (n = in.read(sink, 0, (int) Math.min(sink.length, left))) >= 0) {
                left -= n;
            }
            drained = n < 0;
        }
        if (!drained) {
            ctx.header("Connection", "close");
        }
        return tooLarge(limit);
    }

    private static SluiceException tooLarge(long limit) {
        return new SluiceException(ErrorCode.REQUEST_TOO_LARGE, "the request body is larger than this route accepts ("
                + limit + " bytes)");
    }

    /** The body as one JSON document of at most {@link #MAX_JSON_BYTES}; an empty body is an empty object. */
    public static JsonNode json(Context ctx) {
        return Json.parse(body(ctx, MAX_JSON_BYTES));
    }

    /** An integer query parameter in [min, max], or {@code fallback} when absent. */
    public static int intParam(Context ctx, String name, int fallback, int min, int max) {
        String v = ctx.queryParam(name);
        if (v == null || v.isEmpty()) {
            return fallback;
        }
        try {
            long n = Long.parseLong(v.trim());
            if (n < min || n > max) {
                throw new NumberFormatException();
            }
            return (int) n;
        } catch (NumberFormatException e) {
            throw malformed("query parameter '" + name + "' must be an integer from " + min + " to " + max + " (got '"
                    + Echo.of(v) + "')");
        }
    }

    /** A long query parameter at least {@code min}, or {@code fallback} when absent. */
    public static long longParam(Context ctx, String name, long fallback, long min) {
        String v = ctx.queryParam(name);
        if (v == null || v.isEmpty()) {
            return fallback;
        }
        try {
            long n = Long.parseLong(v.trim());
            if (n < min) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException e) {
            throw malformed("query parameter '" + name + "' must be an integer of at least " + min + " (got '" + Echo.of(v) + "')");
        }
    }

    /** A path segment that must be a positive id. */
    public static long idPath(Context ctx, String name) {
        String v = ctx.pathParam(name);
        try {
            long n = Long.parseLong(v);
            if (n < 1) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException e) {
            throw malformed("'" + Echo.of(v) + "' is not an id (a positive integer)");
        }
    }

    /** A JSON field that must be an integer in [min, max], or {@code fallback} when absent or null. */
    public static int intField(JsonNode body, String name, int fallback, int min, int max) {
        JsonNode n = body.get(name);
        if (n == null || n.isNull()) {
            return fallback;
        }
        if (!n.canConvertToLong() || !n.isIntegralNumber() || n.asLong() < min || n.asLong() > max) {
            throw malformed("field '" + name + "' must be an integer from " + min + " to " + max);
        }
        return n.asInt();
    }

    /** A JSON field that must be a string (at most {@code maxLength} characters), or null when absent. */
    public static String textField(JsonNode body, String name, int maxLength) {
        JsonNode n = body.get(name);
        if (n == null || n.isNull()) {
            return null;
        }
        if (!n.isTextual() || n.asText().length() > maxLength) {
            throw malformed("field '" + name + "' must be a string of at most " + maxLength + " characters");
        }
        return n.asText();
    }

    /** A JSON field that must be a boolean, or {@code fallback}. */
    public static boolean boolField(JsonNode body, String name, boolean fallback) {
        JsonNode n = body.get(name);
        if (n == null || n.isNull()) {
            return fallback;
        }
        if (!n.isBoolean()) {
            throw malformed("field '" + name + "' must be true or false");
        }
        return n.asBoolean();
    }

    /** A JSON field holding a duration text (or a number of milliseconds), or {@code fallback}. */
    public static Duration durationField(JsonNode body, String name, Duration fallback) {
        JsonNode n = body.get(name);
        if (n == null || n.isNull()) {
            return fallback;
        }
        if (n.isIntegralNumber() && n.canConvertToLong() && n.asLong() >= 0) {
            return checked(Duration.ofMillis(n.asLong()), name);
        }
        if (!n.isTextual()) {
            throw malformed("field '" + name + "' must be a duration such as \"500ms\", \"30s\", \"5m\" or \"PT1H\"");
        }
        return duration(n.asText(), name);
    }

    /** Parses a duration text ({@code 500ms 90s 15m 24h 7d} or ISO-8601), 0 to 100 years. */
    public static Duration duration(String text, String what) {
        Duration d = Inputs.duration(text);
        if (d == null) {
            throw malformed("'" + Echo.of(text) + "' (" + what + ") is not a duration; use e.g. 500ms, 30s, 5m, 24h, 7d or PT1H");
        }
        return checked(d, what);
    }

    private static Duration checked(Duration d, String what) {
        if (!Inputs.inRange(d)) {
            throw malformed(what + " must be between 0 and " + Inputs.MAX_DURATION.toDays() + " days");
        }
        return d;
    }

    /** A MALFORMED_REQUEST error with {@code problem}. */
    public static SluiceException malformed(String problem) {
        return new SluiceException(ErrorCode.MALFORMED_REQUEST, problem);
    }
}
