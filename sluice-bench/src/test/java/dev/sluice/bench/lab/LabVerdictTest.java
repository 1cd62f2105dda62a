package dev.sluice.bench.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The verdict rules of BENCHMARKS.md: never a silent pass, never a fail for what a longer drain would settle. */
class LabVerdictTest {

    private static LabChecker.Check check(long produced, long lost, long unexpected, long unbucketed, long orderViolations) {
        return new LabChecker.Check(produced, lost, unexpected, unbucketed, 0, orderViolations, Map.of(), 0);
    }

    @Test
    void cleanDrainedRunPasses() {
        assertThat(Lab.decide(check(100, 0, 0, 0, 0), true, 60, null, null)).containsExactly("pass", null);
    }

    @Test
    void anythingThatMustBeZeroFailsADrainedRun() {
        assertThat(Lab.decide(check(100, 1, 0, 0, 0), true, 60, null, null)[0]).isEqualTo("fail");
        assertThat(Lab.decide(check(100, 0, 1, 0, 0), true, 60, null, null)[0]).isEqualTo("fail");
        assertThat(Lab.decide(check(100, 0, 0, 1, 0), true, 60, null, null)[0]).isEqualTo("fail");
        assertThat(Lab.decide(check(100, 0, 0, 0, 1), true, 60, null, null)[0]).isEqualTo("fail");
    }

    @Test
    void aKeyRunningInTwoProcessesAtOnceFailsEvenATimedOutDrain() {
        LabChecker.Check overlap = new LabChecker.Check(100, 0, 0, 0, 0, 0, Map.of(), 0,
                Map.of(LabGroups.PARTITIONED, 0L), 1, "key k1: ...");
        assertThat(Lab.decide(overlap, true, 60, null, null)[0]).isEqualTo("fail");
        assertThat(Lab.decide(overlap, false, 60, null, null)[1]).contains("key overlaps 1");
    }

    @Test
    void aTimedOutDrainIsUnknownUnlessSomethingIsWrongForGood() {
        String[] v = Lab.decide(check(100, 7, 0, 7, 0), false, 300, null, null);
        assertThat(v[0]).isEqualTo("unknown");
        assertThat(v[1]).contains("drain timed out after 300 s").contains("lost 7");
        // Unexpected deliveries and order violations cannot be undone by more draining.
        assertThat(Lab.decide(check(100, 0, 1, 0, 0), false, 300, null, null)[0]).isEqualTo("fail");
        assertThat(Lab.decide(check(100, 0, 0, 0, 2), false, 300, null, null)[0]).isEqualTo("fail");
    }

    @Test
    void aLateRedeliveryFailsEvenATimedOutDrain() {
        String late = "1 message(s) held by a killed consumer were redelivered later than the lease + 5 s (8.0 s)";
        assertThat(Lab.decide(check(100, 0, 0, 0, 0), true, 60, null, late)).containsExactly("fail", late);
        assertThat(Lab.decide(check(100, 3, 0, 3, 0), false, 60, null, late)).containsExactly("fail", late);
        // What must be zero is named first.
        assertThat(Lab.decide(check(100, 1, 0, 1, 0), true, 60, null, late)[1]).startsWith("lost 1");
    }

    @Test
    void nothingProducedOrAFaultThatNeverFiredIsUnknown() {
        assertThat(Lab.decide(check(0, 0, 0, 0, 0), true, 60, null, null)[0]).isEqualTo("unknown");
        String[] v = Lab.decide(check(100, 0, 0, 0, 0), true, 60, "{kill=0}", null);
        assertThat(v[0]).isEqualTo("unknown");
        assertThat(v[1]).contains("never fired");
    }

    @Test
    void anUnrelatedTransactionThatNeverFiredIsAMissingFault() {
        LabOptions smoke = LabOptions.smoke();
        Map<String, Integer> withoutPin = Map.of("kill", 3, "terminate", 2, "restart", 1);
        String missing = Lab.missingFaults(smoke, withoutPin);
        assertThat(missing).isNotNull();
        assertThat(Lab.decide(check(100, 0, 0, 0, 0), true, 60, missing, null)[0]).isEqualTo("unknown");
        assertThat(Lab.missingFaults(smoke, Map.of("kill", 3, "terminate", 2, "restart", 1, UnrelatedXidFault.KIND, 3)))
                .isNull();
    }
}
