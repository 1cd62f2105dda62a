package dev.sluice.cli;

import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import dev.sluice.server.json.Inputs;
import java.time.Duration;

/** Parses and prints durations on the command line: {@code 90s}, {@code 15m}, {@code 24h}, {@code 7d}, ISO-8601 {@code PT1H}. */
final class Durations {
    private Durations() {
    }

    /** The duration {@code text} names ({@link Inputs#duration}); refuses negative, overlong and unparsable ones with INVALID_ARGUMENT. */
    static Duration parse(String text) {
        Duration d = Inputs.duration(text);
        if (d == null) {
            throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "'" + Terminal.echo(text)
                    + "' is not a duration; use e.g. 90s, 15m, 24h, 7d or ISO-8601 like PT1H30M");
        }
        if (!Inputs.inRange(d)) {
            throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "'" + Terminal.echo(text) + "' is out of range; durations"
                    + " are 0 to " + Inputs.MAX_DURATION.toDays() + " days, e.g. 90s, 15m, 24h, 7d or ISO-8601 like PT1H30M");
        }
        return d;
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
