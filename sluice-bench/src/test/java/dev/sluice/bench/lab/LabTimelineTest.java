package dev.sluice.bench.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.data.Offset.offset;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The part of a redelivery's wait during which another consumer process was running its stream groups. */
class LabTimelineTest {
    private static final double NEVER = Double.POSITIVE_INFINITY;

    @Test
    void anotherConsumerRunningThroughoutCoversTheWholeWait() {
        List<LabTimeline.Running> running = List.of(new LabTimeline.Running("c1", 0, NEVER),
                new LabTimeline.Running("victim", 0, 100));
        assertThat(LabTimeline.covered(100, 109, "victim", running)).isCloseTo(9.0, offset(1e-9));
    }

    @Test
    void theVictimsOwnSpanNeverCounts() {
        List<LabTimeline.Running> running = List.of(new LabTimeline.Running("victim", 0, NEVER));
        assertThat(LabTimeline.covered(100, 109, "victim", running)).isZero();
    }

    @Test
    void aReplacementCountsFromItsStartAndUntilItsKill() {
        // Nobody else ran until 104; c2 ran 104-106 (then killed), c3 from 107 on.
        List<LabTimeline.Running> running = List.of(new LabTimeline.Running("c2", 104, 106),
                new LabTimeline.Running("c3", 107, NEVER), new LabTimeline.Running("c0", 50, 99));
        assertThat(LabTimeline.covered(100, 110, "victim", running)).isCloseTo(5.0, offset(1e-9));
    }

    @Test
    void overlappingSpansAreCountedOnce() {
        List<LabTimeline.Running> running = List.of(new LabTimeline.Running("c1", 101, 105),
                new LabTimeline.Running("c2", 103, 108), new LabTimeline.Running("c3", 104, 106));
        assertThat(LabTimeline.covered(100, 110, "victim", running)).isCloseTo(7.0, offset(1e-9));
    }

    @Test
    void whileAnotherMessageOfTheKeyRunsTheWaitDoesNotCount() {
        List<LabTimeline.Running> running = List.of(new LabTimeline.Running("c1", 0, NEVER));
        // The key was held 101-105 and 104-107 (counted once) and 112-115 (outside the wait): 10 - 6 = 4.
        List<double[]> held = List.of(new double[] {101, 105}, new double[] {104, 107}, new double[] {112, 115});
        assertThat(LabTimeline.covered(100, 110, "victim", running, held)).isCloseTo(4.0, offset(1e-9));
    }

    @Test
    void aHeldKeyCountsOnlyWhileAnotherConsumerRan() {
        // Nobody else ran until 105: of the key held 102-108, only 105-108 is taken off the 5 s another consumer ran.
        List<LabTimeline.Running> running = List.of(new LabTimeline.Running("c2", 105, NEVER));
        List<double[]> held = List.<double[]>of(new double[] {102, 108});
        assertThat(LabTimeline.covered(100, 110, "victim", running, held)).isCloseTo(2.0, offset(1e-9));
    }
}
