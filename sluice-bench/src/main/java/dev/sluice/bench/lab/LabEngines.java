package dev.sluice.bench.lab;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** The lab's engines beside the stream, by name (see {@link LabEngine}). */
final class LabEngines {
    /** The stream engine's name: always on (its producers and consumers are the processes the others run in). */
    static final String STREAMS = "streams";
    /** Every engine name {@code --engines} accepts, in the order they start and report. */
    static final List<String> NAMES = List.of(STREAMS, QueueEngine.NAME, ScheduleEngine.NAME, LockEngine.NAME);

    private LabEngines() {
    }

    /** The engines of {@code names} other than the stream, in {@link #NAMES} order. */
    static List<LabEngine> create(Set<String> names) {
        List<LabEngine> out = new ArrayList<>();
        for (String n : NAMES) {
            if (!names.contains(n)) {
                continue;
            }
            switch (n) {
                case STREAMS -> { }
                case QueueEngine.NAME -> out.add(new QueueEngine());
                case ScheduleEngine.NAME -> out.add(new ScheduleEngine());
                case LockEngine.NAME -> out.add(new LockEngine());
                default -> throw new IllegalArgumentException("unknown lab engine " + n);
            }
        }
        return out;
    }
}
