package dev.sluice.internal.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The column and parameter conversions of the job statements ({@link JobValues}) and the enqueue path choice; no database. */
class JobValuesTest {

    @Test
    void instantsBecomeEpochMicrosAndBackDroppingTheSubMicrosecondRest() {
        Instant t = Instant.parse("2026-12-01T06:31:25.123456789Z");
        long us = JobValues.micros(t);
        assertThat(us).isEqualTo(t.getEpochSecond() * 1_000_000L + 123_456);
        assertThat(JobValues.fromMicros(us)).isEqualTo(Instant.parse("2026-12-01T06:31:25.123456Z"));
        assertThat(JobStore.micros(t)).isEqualTo(us);
    }

    @Test
    void instantsBeforeTheEpochRoundTrip() {
        Instant t = Instant.parse("1969-12-31T23:59:59.999999Z");
        assertThat(JobValues.micros(t)).isEqualTo(-1);
        assertThat(JobValues.fromMicros(-1)).isEqualTo(t);
        assertThat(JobValues.fromMicros(-1_000_001)).isEqualTo(Instant.parse("1969-12-31T23:59:58.999999Z"));
    }

    @Test
    void durationsBecomeMicrosAndOverflowThrows() {
        assertThat(JobValues.micros(Duration.ofMillis(1_500).plusNanos(999))).isEqualTo(1_500_000);
        assertThat(JobValues.micros(Duration.ZERO)).isZero();
        assertThatThrownBy(() -> JobValues.micros(Duration.ofSeconds(Long.MAX_VALUE / 1_000)))
                .isInstanceOf(ArithmeticException.class);
        assertThatThrownBy(() -> JobValues.micros(Instant.MAX)).isInstanceOf(ArithmeticException.class);
    }

    @Test
    void onlyKeylessJobsWithOneContentTypeAndOneSetOfStampsTakeTheBulkPath() {
        EncodedJob.Stamps stamps = new EncodedJob.Stamps(30_000_000_000L, 5, 1_000_000_000L, 60_000_000_000L, 0, null, null);
        EncodedJob plain = job("application/json", null, stamps);
        assertThat(JobInserts.plain(List.of(plain, job("application/json", null, stamps)))).isTrue();
        assertThat(JobInserts.plain(List.of(plain, job("application/json", "k", stamps)))).isFalse();
        assertThat(JobInserts.plain(List.of(plain, job("text/plain", null, stamps)))).isFalse();
        EncodedJob.Stamps other = new EncodedJob.Stamps(30_000_000_000L, 6, 1_000_000_000L, 60_000_000_000L, 0, null, null);
        assertThat(JobInserts.plain(List.of(plain, job("application/json", null, other)))).isFalse();
    }

    private static EncodedJob job(String contentType, String uniqueKey, EncodedJob.Stamps stamps) {
        return new EncodedJob(new byte[] {1}, contentType, null, 0, null, null, null, uniqueKey, stamps, new long[0], "cancel");
    }
}
