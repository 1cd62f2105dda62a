package dev.sluice.internal.schedule;

import com.cronutils.model.Cron;
import com.cronutils.model.CronType;
import com.cronutils.model.definition.CronDefinitionBuilder;
import com.cronutils.model.time.ExecutionTime;
import com.cronutils.parser.CronParser;
import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import dev.sluice.internal.text.Echo;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The due times of a schedule expression: a cron expression read in a zone (cron-utils; 5 fields, or 6
 * with seconds first) or {@code @every <n>{s|m|h|d}}, due at whole multiples of the interval since the
 * epoch. Due times are whole seconds. {@link #nextAfter} defines the schedule; {@link #missed} only uses
 * cron-utils' backward search to skip far ahead after long downtime.
 */
public sealed interface DueTimes {
    /** The longest {@code @every} interval. */
    Duration MAX_INTERVAL = Duration.ofDays(3650);

    /** The first due time strictly after {@code t}, or null when there is none. */
    Instant nextAfter(Instant t);

    /** A due time strictly before {@code t} (the latest, modulo cron-utils' DST quirks), or null. */
    Instant previousBefore(Instant t);

    /** The interval of an {@code @every} schedule, null for cron. */
    Duration interval();

    /**
     * The due times in {@code [from, now]}, oldest first, keeping only the newest {@code max} of them. Costs
     * O(max) steps however long the downtime was.
     */
    default List<Instant> missed(Instant from, Instant now, int max) {
        Instant anchor = from;
        // Skip far ahead: the (max+1)-th due time back from now is early enough to start walking from.
        Instant back = now.plusNanos(1);
        for (int i = 0; i <= max && back != null; i++) {
            back = previousBefore(back);
        }
        if (back != null && back.isAfter(anchor)) {
            anchor = back;
        }
        ArrayDeque<Instant> kept = new ArrayDeque<>(max + 1);
        for (Instant t = nextAfter(anchor.minusNanos(1_000)); t != null && !t.isAfter(now); t = nextAfter(t)) {
            kept.addLast(t);
            if (kept.size() > max) {
                kept.removeFirst();
            }
        }
        return new ArrayList<>(kept);
    }

    /**
     * Parses an expression (already stripped of any {@code TZ=} prefix).
     *
     * @throws SluiceException {@link ErrorCode#INVALID_SCHEDULE} for anything that does not parse or never fires
     */
    static DueTimes parse(String expression, ZoneId zone) {
        String e = expression.strip();
        if (e.startsWith("@every")) {
            return Every.parse(e);
        }
        String cron = CronTimes.NICKNAMES.getOrDefault(e.toLowerCase(Locale.ROOT), e);
        return CronTimes.parse(cron, zone);
    }

    /** {@code @every <n>{s|m|h|d}}: due at whole multiples of the interval since the epoch. */
    record Every(long seconds) implements DueTimes {
        private static final Pattern FORM = Pattern.compile("@every\\s+([0-9]{1,10})([smhd])");

        static Every parse(String e) {
            Matcher m = FORM.matcher(e);
            if (!m.matches()) {
                throw new SluiceException(ErrorCode.INVALID_SCHEDULE, "'" + Echo.of(e) + "' is not '@every <n>{s|m|h|d}' (for example '@every 30s')");
            }
            long n = Long.parseLong(m.group(1));
            long unit = switch (m.group(2)) {
                case "s" -> 1;
                case "m" -> 60;
                case "h" -> 3600;
                default -> 86_400;
            };
            if (n < 1 || n * unit > MAX_INTERVAL.getSeconds()) {
                throw new SluiceException(ErrorCode.INVALID_SCHEDULE, "'" + Echo.of(e) + "': the interval must be at least 1 second and at most "
                        + MAX_INTERVAL.toDays() + " days");
            }
            return new Every(n * unit);
        }

        @Override
        public Instant nextAfter(Instant t) {
            return Instant.ofEpochSecond((Math.floorDiv(t.getEpochSecond(), seconds) + 1) * seconds);
        }

        @Override
        public Instant previousBefore(Instant t) {
            long s = t.getNano() == 0 ? t.getEpochSecond() - 1 : t.getEpochSecond();
            return Instant.ofEpochSecond(Math.floorDiv(s, seconds) * seconds);
        }

        @Override
        public Duration interval() {
            return Duration.ofSeconds(seconds);
        }
    }

    /** A cron expression in a zone. */
    record CronTimes(ExecutionTime executions, ZoneId zone) implements DueTimes {
        private static final CronParser FIVE = new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.UNIX));
        private static final CronParser SIX = new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.SPRING));
        static final Map<String, String> NICKNAMES = Map.of("@yearly", "0 0 1 1 *", "@annually", "0 0 1 1 *",
                "@monthly", "0 0 1 * *", "@weekly", "0 0 * * 0", "@daily", "0 0 * * *", "@midnight", "0 0 * * *",
                "@hourly", "0 * * * *");

        static CronTimes parse(String e, ZoneId zone) {
            int fields = e.split("\\s+").length;
            if (fields != 5 && fields != 6) {
                throw new SluiceException(ErrorCode.INVALID_SCHEDULE, "cron expression '" + Echo.of(e) + "' has " + fields
                        + " fields; it needs 5 (min hour day month weekday) or 6 (seconds first)");
            }
            Cron cron;
            try {
                cron = (fields == 5 ? FIVE : SIX).parse(e);
                cron.validate();
            } catch (RuntimeException ex) {
                throw new SluiceException(ErrorCode.INVALID_SCHEDULE, "cron expression '" + Echo.of(e) + "' is not valid: " + Echo.of(ex.getMessage()), ex);
            }
            CronTimes c = new CronTimes(ExecutionTime.forCron(cron), zone);
            if (c.nextAfter(Instant.now()) == null) {
                throw new SluiceException(ErrorCode.INVALID_SCHEDULE, "cron expression '" + Echo.of(e) + "' never fires");
            }
            return c;
        }

        @Override
        public Instant nextAfter(Instant t) {
            // Due times are whole seconds: from the whole second at or before t, the next one is after t too.
            ZonedDateTime from = t.truncatedTo(ChronoUnit.SECONDS).atZone(zone);
            Optional<ZonedDateTime> next = executions.nextExecution(from);
            return next.map(ZonedDateTime::toInstant).orElse(null);
        }

        @Override
        public Instant previousBefore(Instant t) {
            Instant s = t.truncatedTo(ChronoUnit.SECONDS);
            ZonedDateTime from = (s.equals(t) ? s : s.plusSeconds(1)).atZone(zone);
            return executions.lastExecution(from).map(ZonedDateTime::toInstant).orElse(null);
        }

        @Override
        public Duration interval() {
            return null;
        }
    }
}
