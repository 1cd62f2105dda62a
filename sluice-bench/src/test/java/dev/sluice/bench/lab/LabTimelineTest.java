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
}
