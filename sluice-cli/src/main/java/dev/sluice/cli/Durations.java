package dev.sluice.cli;

import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parses and prints durations on the command line: {@code 90s}, {@code 15m}, {@code 24h}, {@code 7d}, ISO-8601 {@code PT1H}. */
final class Durations {
    private static final Pattern SHORT = Pattern.compile("^(\\d+)(ms|s|m|h|d)$");

    private Durations() {
    }

    /** The longest duration any flag takes (longer ones overflow the millisecond clocks they end up on). */
    static final Duration MAX = Duration.ofDays(36_500);

    /** The duration {@code text} names; refuses negative, overlong and unparsable ones with INVALID_ARGUMENT. */
    static Duration parse(String text) {
        Duration d = parseAny(text);
        if (d.isNegative() || d.compareTo(MAX) > 0) {
            throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "'" + Terminal.echo(text) + "' is out of range; durations"
                    + " are 0 to " + MAX.toDays() + " days, e.g. 90s, 15m, 24h, 7d or ISO-8601 like PT1H30M");
        }
        return d;
    }

    private static Duration parseAny(String text) {
        String t = text.trim().toLowerCase(Locale.ROOT);
        Matcher m = SHORT.matcher(t);
        try {
            if (m.matches()) {
                long n = Long.parseLong(m.group(1));
                return switch (m.group(2)) {
                    case "ms" -> Duration.ofMillis(n);
                    case "s" -> Duration.ofSeconds(n);
                    case "m" -> Duration.ofMinutes(n);
                    case "h" -> Duration.ofHours(n);
                    default -> Duration.ofDays(n);
                };
            }
            return Duration.parse(text.trim().toUpperCase(Locale.ROOT));
        } catch (RuntimeException e) {
            throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "'" + Terminal.echo(text)
                    + "' is not a duration; use e.g. 90s, 15m, 24h, 7d or ISO-8601 like PT1H30M");
        }
    }

    static String format(Duration d) {
        long s = d.getSeconds();
        if (d.getNano() != 0) {
            return d.toString();
        }
        if (s % 86_400 == 0) {
            return s / 86_400 + "d";
        }
        if (s % 3_600 == 0) {
            return s / 3_600 + "h";
        }
        if (s % 60 == 0) {
            return s / 60 + "m";
        }
        return s + "s";
    }
}
