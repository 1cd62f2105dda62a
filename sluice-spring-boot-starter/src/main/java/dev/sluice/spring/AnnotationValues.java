package dev.sluice.spring;

import dev.sluice.ConcurrencyPolicy;
import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import dev.sluice.StartPosition;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.util.StringValueResolver;

/**
 * Reads the string attributes of {@link SluiceListener} and {@link SluiceJob}: placeholders resolved, then each value
 * checked as hostile input, a bad one raising {@link ErrorCode#LISTENER_INVALID} naming the method and attribute.
 */
final class AnnotationValues {
    private static final int MAX_ECHO = 80;

    private final StringValueResolver resolver;
    private final String where;

    AnnotationValues(StringValueResolver resolver, String where) {
        this.resolver = resolver;
        this.where = where;
    }

    /** The value with placeholders resolved, trimmed; {@code null} when it is empty (meaning: the default). */
    String text(String attribute, String raw) {
        String v = raw;
        if (resolver != null && raw != null) {
            try {
                v = resolver.resolveStringValue(raw);
            } catch (RuntimeException e) {
                throw invalid(attribute, "its placeholder cannot be resolved: " + e.getMessage(), e);
            }
        }
        if (v == null) {
            return null;
        }
        if (v.contains("${")) {
            // The context's resolver leaves an unknown placeholder as it is; a name or value with one is a mistake.
            throw invalid(attribute, "has an unresolved placeholder ('" + echo(v) + "'): define the property", null);
        }
        v = v.trim();
        return v.isEmpty() ? null : v;
    }

    /** A required name (stream, group, queue), checked with the library's rules. */
    String name(String attribute, String raw) {
        String v = text(attribute, raw);
        if (v == null) {
            throw invalid(attribute, "is required", null);
        }
        try {
            return dev.sluice.Sluice.validateName(attribute, v);
        } catch (SluiceException e) {
            throw error(where, e.problem(), e);
        }
    }

    /** An integer in [min, max], or {@code null} for the default. */
    Integer integer(String attribute, String raw, int min, int max) {
        String v = text(attribute, raw);
        if (v == null) {
            return null;
        }
        final int n;
        try {
            n = Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw invalid(attribute, "must be a whole number (got '" + echo(v) + "')", null);
        }
        if (n < min || n > max) {
            throw invalid(attribute, "must be between " + min + " and " + max + " (got " + n + ")", null);
        }
        return n;
    }

    /** A non-negative duration ({@code 500ms}, {@code 30s}, {@code PT1S}), or {@code null} for the default. */
    Duration duration(String attribute, String raw) {
        String v = text(attribute, raw);
        if (v == null) {
            return null;
        }
        final Duration d;
        try {
            d = DurationStyle.detectAndParse(v);
        } catch (RuntimeException e) {
            throw invalid(attribute, "must be a duration such as 500ms, 30s or PT1M (got '" + echo(v) + "')", null);
        }
        if (d.isNegative()) {
            throw invalid(attribute, "must not be negative (got " + d + ")", null);
        }
        return d;
    }

    /** {@code true} or {@code false} (no default: the attribute always has one). */
    boolean bool(String attribute, String raw) {
        String v = text(attribute, raw);
        if ("true".equalsIgnoreCase(v)) {
            return true;
        }
        if ("false".equalsIgnoreCase(v)) {
            return false;
        }
        throw invalid(attribute, "must be true or false (got '" + echo(v) + "')", null);
    }

    /** A key policy, or {@code null} for the default. */
    ConcurrencyPolicy policy(String attribute, String raw) {
        String v = text(attribute, raw);
        if (v == null) {
            return null;
        }
        try {
            return ConcurrencyPolicy.parse(v);
        } catch (SluiceException e) {
            throw invalid(attribute, "must be parallel, exclusive or ordered (got '" + echo(v) + "')", e);
        }
    }

    /** {@code beginning}, {@code head}, {@code id:N} or {@code time:INSTANT}, or {@code null} for the default. */
    StartPosition start(String attribute, String raw) {
        String v = text(attribute, raw);
        if (v == null) {
            return null;
        }
        String lower = v.toLowerCase(java.util.Locale.ROOT);
        if (lower.equals("beginning")) {
            return StartPosition.beginning();
        }
        if (lower.equals("head")) {
            return StartPosition.head();
        }
        try {
            if (lower.startsWith("id:")) {
                long id = Long.parseLong(v.substring(3).trim());
                if (id < 0) {
                    throw invalid(attribute, "an id start must not be negative (got " + id + ")", null);
                }
                return StartPosition.atId(id);
            }
            if (lower.startsWith("time:")) {
                return StartPosition.atTime(Instant.parse(v.substring(5).trim()));
            }
        } catch (NumberFormatException | DateTimeParseException e) {
            throw invalid(attribute, "has a malformed id or instant (got '" + echo(v) + "')", null);
        }
        throw invalid(attribute, "must be beginning, head, id:N or time:ISO-8601-instant (got '" + echo(v) + "')", null);
    }

    /** A {@link ErrorCode#LISTENER_INVALID} error about {@code attribute} of this method. */
    SluiceException invalid(String attribute, String problem, Throwable cause) {
        return error(where, attribute + " " + problem, cause);
    }

    static SluiceException error(String where, String problem, Throwable cause) {
        return cause == null ? new SluiceException(ErrorCode.LISTENER_INVALID, where + ": " + problem)
                : new SluiceException(ErrorCode.LISTENER_INVALID, where + ": " + problem, cause);
    }

    /** Shows a hostile value safely: control characters replaced, cut to a bounded length. */
    static String echo(String v) {
        StringBuilder b = new StringBuilder();
        v.codePoints().limit(MAX_ECHO).forEach(cp -> b.appendCodePoint(Character.isISOControl(cp) ? '?' : cp));
        return v.codePointCount(0, v.length()) > MAX_ECHO ? b + "…" : b.toString();
    }
}
