package dev.sluice.schedule;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sluice.ErrorCode;
import dev.sluice.ScheduleSpec;
import dev.sluice.SluiceException;
import dev.sluice.internal.schedule.DueTimes;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

/** Parsing of schedule specs (cron 5/6 fields, zones, {@code @every}), due-time computation, DST, bad input. */
class ScheduleSpecTest {
    private static final ZoneId UTC = ZoneId.of("UTC");
    private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");

    static void assertCode(ErrorCode code, ThrowingCallable call) {
        assertThatThrownBy(call).isInstanceOfSatisfying(SluiceException.class, e -> assertThat(e.code()).isEqualTo(code));
    }

    static List<Instant> next(DueTimes times, Instant from, int n) {
        List<Instant> out = new ArrayList<>();
        Instant t = from;
        for (int i = 0; i < n; i++) {
            t = times.nextAfter(t);
            out.add(t);
        }
        return out;
    }

    static Instant at(String iso) {
        return Instant.parse(iso);
    }

    @Test
    void fiveFieldCronInUtcByDefault() {
        ScheduleSpec spec = ScheduleSpec.cron("*/15 9-10 * * MON-FRI").toStream("ticks").build();
        assertThat(spec.zone()).isEqualTo(UTC);
        assertThat(spec.interval()).isNull();
        // 2026-11-27 is a Friday; the next match after Friday 10:50 is Monday 09:00.
        assertThat(next(DueTimes.parse(spec.expression(), spec.zone()), at("2026-11-27T10:20:00Z"), 4)).containsExactly(
                at("2026-11-27T10:30:00Z"), at("2026-11-27T10:45:00Z"), at("2026-11-30T09:00:00Z"), at("2026-11-30T09:15:00Z"));
    }

    @Test
    void sixFieldCronHasSecondsFirst() {
        DueTimes t = DueTimes.parse("*/20 * * * * *", UTC);
        assertThat(next(t, at("2026-01-01T00:00:00Z"), 3)).containsExactly(
                at("2026-01-01T00:00:20Z"), at("2026-01-01T00:00:40Z"), at("2026-01-01T00:01:00Z"));
        assertThat(next(DueTimes.parse("30 0 12 * * *", UTC), at("2026-01-01T12:00:00Z"), 1))
                .containsExactly(at("2026-01-01T12:00:30Z"));
    }

    @Test
    void cronIsReadInTheZoneGivenByTheSpecOrATzPrefix() {
        ScheduleSpec zoned = ScheduleSpec.cron("0 9 * * *").zone("Europe/Berlin").toQueue("q").build();
        ScheduleSpec prefixed = ScheduleSpec.cron("TZ=Europe/Berlin 0 9 * * *").toQueue("q").build();
        assertThat(prefixed).isEqualTo(zoned);
        assertThat(prefixed.expression()).isEqualTo("0 9 * * *");
        DueTimes t = DueTimes.parse(zoned.expression(), zoned.zone());
        // 09:00 in Berlin is 08:00 UTC in winter and 07:00 UTC in summer.
        assertThat(t.nextAfter(at("2026-01-15T00:00:00Z"))).isEqualTo(at("2026-01-15T08:00:00Z"));
        assertThat(t.nextAfter(at("2026-07-15T00:00:00Z"))).isEqualTo(at("2026-07-15T07:00:00Z"));
        assertCode(ErrorCode.INVALID_SCHEDULE,
                () -> ScheduleSpec.cron("TZ=Europe/Berlin 0 9 * * *").zone("UTC").toQueue("q").build());
    }

    @Test
    void dstTransitionsNeverRepeatOrLoopAndHourlyCronsKeepEveryRealHour() {
        DueTimes daily = DueTimes.parse("30 2 * * *", BERLIN);
        // Spring forward (2026-03-29 02:00 -> 03:00): 02:30 does not exist that day and is skipped.
        assertThat(next(daily, ZonedDateTime.of(2026, 3, 28, 12, 0, 0, 0, BERLIN).toInstant(), 2)).containsExactly(
                ZonedDateTime.of(2026, 3, 30, 2, 30, 0, 0, BERLIN).toInstant(),
                ZonedDateTime.of(2026, 3, 31, 2, 30, 0, 0, BERLIN).toInstant());
        // Fall back (2026-10-25 03:00 -> 02:00): 02:30 happens twice; it fires once, at the first.
        List<Instant> fall = next(daily, ZonedDateTime.of(2026, 10, 24, 12, 0, 0, 0, BERLIN).toInstant(), 2);
        assertThat(fall).containsExactly(at("2026-10-25T00:30:00Z"), at("2026-10-26T01:30:00Z"));
        // Every hour stays an hour apart in real time across both transitions (no duplicate, no gap).
        DueTimes hourly = DueTimes.parse("0 * * * *", BERLIN);
        for (Instant from : List.of(at("2026-03-28T20:00:00Z"), at("2026-10-24T20:00:00Z"))) {
            List<Instant> hours = next(hourly, from, 12);
            for (int i = 1; i < hours.size(); i++) {
                assertThat(Duration.between(hours.get(i - 1), hours.get(i))).isEqualTo(Duration.ofHours(1));
            }
        }
    }

    @Test
    void nicknamesAreCronShorthands() {
        assertThat(DueTimes.parse("@hourly", UTC).nextAfter(at("2026-01-01T10:20:00Z"))).isEqualTo(at("2026-01-01T11:00:00Z"));
        assertThat(DueTimes.parse("@daily", UTC).nextAfter(at("2026-01-01T10:20:00Z"))).isEqualTo(at("2026-01-02T00:00:00Z"));
    }

    @Test
    void everyIsDueAtWholeMultiplesOfItsIntervalSinceTheEpoch() {
        Map<String, Duration> forms = Map.of("@every 1s", Duration.ofSeconds(1), "@every 90s", Duration.ofSeconds(90),
                "@every 5m", Duration.ofMinutes(5), "@every 2h", Duration.ofHours(2), "@every 1d", Duration.ofDays(1),
                "@every  7m", Duration.ofMinutes(7));
        forms.forEach((text, interval) -> assertThat(DueTimes.parse(text, UTC).interval()).as(text).isEqualTo(interval));
        DueTimes five = DueTimes.parse("@every 5m", UTC);
        assertThat(next(five, at("2026-01-01T10:02:30.500Z"), 2)).containsExactly(at("2026-01-01T10:05:00Z"), at("2026-01-01T10:10:00Z"));
        assertThat(five.nextAfter(at("2026-01-01T10:05:00Z"))).as("strictly after").isEqualTo(at("2026-01-01T10:10:00Z"));
        assertThat(five.previousBefore(at("2026-01-01T10:05:00Z"))).isEqualTo(at("2026-01-01T10:00:00Z"));
        assertThat(five.previousBefore(at("2026-01-01T10:05:00.001Z"))).isEqualTo(at("2026-01-01T10:05:00Z"));
        assertThat(ScheduleSpec.every(Duration.ofSeconds(30)).toStream("s").build().expression()).isEqualTo("@every 30s");
        assertThat(DueTimes.parse("@every 1d", BERLIN).nextAfter(at("2026-06-01T10:00:00Z")))
                .as("@every ignores the zone").isEqualTo(at("2026-06-02T00:00:00Z"));
    }

    @Test
    void missedDueTimesKeepTheNewestAndCostLittleAfterLongDowntime() {
        DueTimes every = DueTimes.parse("@every 1s", UTC);
        Instant from = at("2026-01-01T00:00:00Z");
        Instant now = at("2026-06-01T00:00:00.250Z"); // five months of seconds missed
        assertThat(every.missed(from, now, 1)).containsExactly(at("2026-06-01T00:00:00Z"));
        assertThat(every.missed(from, now, 3)).containsExactly(
                at("2026-05-31T23:59:58Z"), at("2026-05-31T23:59:59Z"), at("2026-06-01T00:00:00Z"));
        assertThat(every.missed(at("2026-06-01T00:00:00Z"), now, 5)).as("only what is due").containsExactly(at("2026-06-01T00:00:00Z"));
        assertThat(every.missed(at("2026-06-01T00:00:01Z"), now, 5)).as("nothing due yet").isEmpty();

        DueTimes cron = DueTimes.parse("* * * * * *", UTC); // every second, by cron
        long started = System.nanoTime();
        assertThat(cron.missed(from, now, 2)).containsExactly(at("2026-05-31T23:59:59Z"), at("2026-06-01T00:00:00Z"));
        assertThat(Duration.ofNanos(System.nanoTime() - started)).as("no walk over five months").isLessThan(Duration.ofSeconds(2));
        DueTimes nightly = DueTimes.parse("0 2 * * *", BERLIN);
        assertThat(nightly.missed(at("2026-03-01T01:00:00Z"), at("2026-03-04T12:00:00Z"), 2))
                .containsExactly(at("2026-03-03T01:00:00Z"), at("2026-03-04T01:00:00Z"));
    }

    @Test
    void badSpecsAreRejectedWithCodesBeforeAnyIo() {
        for (String bad : List.of("", "   ", "* * *", "hello", "* * * * * * *", "61 * * * *", "* 25 * * *", "0 0 30 2 *",
                "@every", "@every 0s", "@every 5", "@every 5x", "@every -1m", "@every 3651d", "@every 1.5h", "@yearlyish",
                "TZ=Mars/Base 0 9 * * *", "TZ=Europe/Berlin")) {
            assertCode(ErrorCode.INVALID_SCHEDULE, () -> ScheduleSpec.builder(bad).toStream("s").build());
        }
        assertCode(ErrorCode.INVALID_SCHEDULE, () -> ScheduleSpec.cron("0 9 * * *").zone("Nowhere/Atlantis"));
        assertCode(ErrorCode.INVALID_SCHEDULE, () -> ScheduleSpec.cron("0 9 * * *").build());
        assertCode(ErrorCode.INVALID_SCHEDULE, () -> ScheduleSpec.every(Duration.ofMillis(1500)));
        assertCode(ErrorCode.INVALID_SCHEDULE, () -> ScheduleSpec.every(Duration.ZERO));
        assertCode(ErrorCode.INVALID_SCHEDULE, () -> ScheduleSpec.cron("0 9 * * *").toStream("s").catchUp(0));
        assertCode(ErrorCode.INVALID_SCHEDULE, () -> ScheduleSpec.cron("0 9 * * *").toStream("s").catchUp(1001));
        assertCode(ErrorCode.INVALID_NAME, () -> ScheduleSpec.cron("0 9 * * *").toStream("Bad Name"));
        assertCode(ErrorCode.INVALID_NAME, () -> ScheduleSpec.cron("0 9 * * *").toQueue("__system.x"));
        assertCode(ErrorCode.PAYLOAD_NOT_SERIALIZABLE, () -> ScheduleSpec.cron("0 9 * * *").payload(new Object()));
    }

    @Test
    void payloadsAreEncodedOnceByTheirSerde() {
        record Report(String kind, int days) {
        }
        ScheduleSpec json = ScheduleSpec.cron("0 9 * * *").toQueue("reports").payload(new Report("daily", 1)).build();
        assertThat(new String(json.payload(), StandardCharsets.UTF_8)).isEqualTo("{\"kind\":\"daily\",\"days\":1}");
        assertThat(json.contentType()).isEqualTo("application/json");
        ScheduleSpec text = ScheduleSpec.cron("0 9 * * *").toQueue("reports").payload("hello").build();
        assertThat(text.contentType()).startsWith("text/plain");
        ScheduleSpec raw = ScheduleSpec.cron("0 9 * * *").toQueue("reports").payload(new byte[] {1, 2}, "application/x-custom").build();
        assertThat(raw.payload()).containsExactly(1, 2);
        assertThat(raw.contentType()).isEqualTo("application/x-custom");
        ScheduleSpec none = ScheduleSpec.cron("0 9 * * *").toQueue("reports").build();
        assertThat(none.payload()).isEmpty();
        assertThat(none.contentType()).isEqualTo("application/octet-stream");
        assertThat(none.misfire()).isEqualTo(ScheduleSpec.Misfire.SKIP);
        assertThat(raw.toBuilder().build()).isEqualTo(raw).hasSameHashCodeAs(raw);
    }
}
