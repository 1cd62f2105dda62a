package dev.sluice.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The xmin-pin flags of {@code bench latency} and {@code bench lab}: documented in {@code -h}, and bad
 * values refused as coded errors before any server is started or connected to.
 */
class BenchPinCliTest {

    private static void expectInvalid(CliTest.Run run) {
        assertThat(run.exit()).as(run.out() + run.err()).isEqualTo(Main.FAILURE);
        assertThat(run.err()).contains("[SLU-0015]").doesNotContain("\tat ").doesNotContain("Exception");
        assertThat(run.out()).as("no result printed").doesNotContain("p50_ms").doesNotContain("verdict");
    }

    @Test
    void helpNamesTheFlags() {
        assertThat(CliTest.raw("bench", "latency", "-h").out()).contains("--pin-xmin-for=DURATION");
        assertThat(CliTest.raw("bench", "lab", "-h").out()).contains("--pin-xmin-every=DURATION")
                .contains("--pin-xmin-for=DURATION");
    }

    @Test
    void latencyRefusesAPinThatIsNotAPositiveDuration() {
        for (String bad : List.of("0s", "0", "500ms", "-5s", "PT-5S", "soon")) {
            CliTest.Run r = CliTest.raw("bench", "latency", "--pin-xmin-for", bad);
            expectInvalid(r);
            assertThat(r.err()).as(bad).containsAnyOf("at least 1s", "not a duration", "out of range");
        }
    }

    @Test
    void labRefusesAHoldThatIsNotShorterThanItsInterval() {
        for (List<String> bad : List.of(List.of("--pin-xmin-every", "5s", "--pin-xmin-for", "5s"),
                List.of("--pin-xmin-every", "5s", "--pin-xmin-for", "0"),
                List.of("--pin-xmin-every", "-5s"))) {
            List<String> args = new java.util.ArrayList<>(List.of("bench", "lab"));
            args.addAll(bad);
            expectInvalid(CliTest.raw(args.toArray(String[]::new)));
        }
    }
}
