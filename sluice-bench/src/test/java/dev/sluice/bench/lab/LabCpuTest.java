package dev.sluice.bench.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link LabCpu} adds each process's CPU growth to its part: the server is the process named by
 * {@code postmaster.pid} and everything under it; a worker is a consumer (first 30 s apart) or a producer; a process
 * first seen after the baseline counts all of its time. Busy shell loops stand in for them.
 */
class LabCpuTest {

    private static Process busy(String script) throws Exception {
        return new ProcessBuilder("sh", "-c", script).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    }

    @Test
    void eachProcessCountsForItsPart(@TempDir Path dir) throws Exception {
        // A "postmaster" that is idle itself and runs a busy child: only the descendant burns CPU.
        Process server = busy("sh -c 'while :; do :; done' & wait");
        Path pidFile = dir.resolve("postmaster.pid");
        Files.writeString(pidFile, server.pid() + "\n" + dir + "\n", StandardCharsets.US_ASCII);
        List<LabCpu.Worker> workers = new ArrayList<>();
        List<Process> started = new ArrayList<>(List.of(server));
        try {
            LabCpu cpu = new LabCpu(() -> pidFile, () -> List.copyOf(workers));
            long t0 = System.nanoTime();
            cpu.sample(t0);
            // A consumer started after the baseline: all of its time counts, as a starting consumer's.
            Process consumer = busy("while :; do :; done");
            started.add(consumer);
            workers.add(new LabCpu.Worker(true, consumer.toHandle()));
            Thread.sleep(1_500);
            cpu.sample(System.nanoTime());
            Map<String, Double> cores = cpu.cores();
            assertThat(cores.get(LabCpu.SERVER)).as("the busy descendant of the postmaster").isGreaterThan(0.3);
            assertThat(cores.get(LabCpu.CONSUMERS_STARTING)).as("a consumer in its first 30 s").isGreaterThan(0.3);
            assertThat(cores.get(LabCpu.CONSUMERS)).isZero();
            assertThat(cores.get(LabCpu.PRODUCERS)).isZero();
            assertThat(cores.get(LabCpu.TOTAL)).isGreaterThanOrEqualTo(cores.get(LabCpu.SERVER) + cores.get(LabCpu.CONSUMERS_STARTING) - 0.02);
        } finally {
            for (Process p : started) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
            }
        }
    }

    @Test
    void withoutAServerOrASecondSampleNothingIsMade(@TempDir Path dir) {
        LabCpu cpu = new LabCpu(() -> null, List::of);
        assertThat(cpu.cores()).isEmpty();
        cpu.sample(System.nanoTime());
        assertThat(cpu.cores()).as("one sample is only a baseline").isEmpty();
        LabCpu missing = new LabCpu(() -> dir.resolve("postmaster.pid"), List::of);
        long t = System.nanoTime();
        missing.sample(t);
        missing.sample(t + 1_000_000_000L);
        assertThat(missing.cores()).containsEntry(LabCpu.SERVER, 0.0).containsKey(LabCpu.TOTAL);
    }
}
