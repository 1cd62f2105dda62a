package dev.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sluice.ErrorCode;
import org.junit.jupiter.api.Test;

/** Bad flags of {@code bench e2e --partitions} and {@code bench rebalance}: usage or coded errors, nothing started. */
class BenchPartitionsCliTest {
    /** Nothing listens there: a benchmark that got past its options would fail to connect, not validate. */
    private static final String NOWHERE = "jdbc:postgresql://127.0.0.1:1/none";

    @Test
    void partitionsOutOfRangeIsAUsageError() {
        for (String bad : new String[] {"0", "-3", "1025", "many", "99999999999"}) {
            CliTest.Run r = CliTest.raw("bench", "e2e", "--partitions", bad, "--database-url", NOWHERE);
            assertThat(r.exit()).as(bad + ": " + r.err()).isEqualTo(Main.USAGE);
            assertThat(r.err()).contains("--partitions").doesNotContain("\tat ").doesNotContain("connecting");
        }
        assertThat(CliTest.raw("bench", "e2e", "--help").out()).contains("--partitions=N");
    }

    @Test
    void rebalanceRefusesNonsenseWithCodedErrors() {
        String code = "[" + ErrorCode.INVALID_ARGUMENT.code() + "]";
        for (String[] bad : new String[][] {{"--members", "1"}, {"--buckets", "0"}, {"--lease", "10ms"},
                {"--lease", "soon"}, {"--backlog", "5"}, {"--add", "-1"}, {"--concurrency", "0"}}) {
            CliTest.Run r = CliTest.raw("bench", "rebalance", bad[0], bad[1], "--database-url", NOWHERE);
            assertThat(r.exit()).as(String.join(" ", bad) + ": " + r.err()).isEqualTo(Main.FAILURE);
            assertThat(r.err()).contains(code).doesNotContain("\tat ").doesNotContain("Exception");
        }
        CliTest.Run r = CliTest.raw("bench", "rebalance", "--members", "x");
        assertThat(r.exit()).isEqualTo(Main.USAGE);
        assertThat(CliTest.raw("bench", "rebalance", "-h").out()).contains("--lease=DURATION").contains("--buckets=N");
    }
}
