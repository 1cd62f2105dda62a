package dev.sluice.bench.lab;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link LabClassArchive}: the first consumer records its classes, the orchestrator's tick dumps them once the recorder
 * ended, and every worker after that maps the archive (a JVM that demands sharing, {@code -Xshare:on}, starts with it).
 * A class path with a directory is never archived.
 */
class LabClassArchiveTest {
    private static final String JAVA = Path.of(System.getProperty("java.home"), "bin", "java").toString();

    /** A jar of the test class path (any will do: the workers' class path must be jars only). */
    private static String someJar() throws Exception {
        return Path.of(org.assertj.core.api.Assertions.class.getProtectionDomain().getCodeSource().getLocation().toURI())
                .toString();
    }

    private static int run(List<String> options, String classPath) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(JAVA));
        cmd.addAll(options);
        cmd.addAll(List.of("-cp", classPath, "-version"));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return p.exitValue();
    }

    @Test
    void theFirstConsumerRecordsAndLaterWorkersMapTheDumpedArchive(@TempDir Path work) throws Exception {
        String jar = someJar();
        List<String> progress = new CopyOnWriteArrayList<>();
        LabClassArchive a = new LabClassArchive(true, JAVA, jar, work, progress::add);
        assertThat(a.state()).isEqualTo("recording");
        assertThat(a.options(false)).as("a producer does not record").isEmpty();
        List<String> first = a.options(true);
        assertThat(first).singleElement().asString().startsWith("-XX:DumpLoadedClassList=");
        // The recorder: a JVM that loads its classes and ends (a consumer is killed or stopped the same way).
        List<String> cmd = new ArrayList<>(List.of(JAVA));
        cmd.addAll(first);
        cmd.addAll(List.of("-cp", jar, "-version"));
        Process recorder = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        a.recording(recorder);
        assertThat(a.options(true)).as("one recorder only").isEmpty();
        assertThat(recorder.waitFor(60, TimeUnit.SECONDS)).isTrue();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (!a.state().equals("in use") && !a.state().startsWith("off") && System.nanoTime() < deadline) {
            a.tick(System.nanoTime());
            Thread.sleep(50);
        }
        assertThat(a.state()).isEqualTo("in use");
        assertThat(progress).anyMatch(l -> l.contains("class archive ready"));
        assertThat(Files.size(work.resolve("worker.jsa"))).isPositive();
        for (boolean consumer : new boolean[] {true, false}) {
            List<String> options = a.options(consumer);
            assertThat(options).singleElement().asString().startsWith("-XX:SharedArchiveFile=");
            List<String> strict = new ArrayList<>(options);
            strict.add("-Xshare:on"); // fails to start unless the archive maps
            assertThat(run(strict, jar)).as("a worker mapping the archive starts").isZero();
        }
        a.close();
    }

    @Test
    void aClassPathWithADirectoryOrTheSwitchOffRunsWithoutAnArchive(@TempDir Path work) throws Exception {
        LabClassArchive dirs = new LabClassArchive(true, JAVA, someJar() + java.io.File.pathSeparator + work, work, l -> { });
        assertThat(dirs.state()).isEqualTo("off: the class path is not all jar files");
        assertThat(dirs.options(true)).isEmpty();
        dirs.tick(System.nanoTime() + TimeUnit.MINUTES.toNanos(5));
        assertThat(dirs.options(true)).isEmpty();
        // A dump that cannot start is given up once: later ticks neither retry it nor report it again.
        List<String> progress = new CopyOnWriteArrayList<>();
        LabClassArchive broken = new LabClassArchive(true, work.resolve("no-java").toString(), someJar(), work, progress::add);
        assertThat(broken.options(true)).singleElement().asString().startsWith("-XX:DumpLoadedClassList=");
        Files.writeString(work.resolve("worker.classlist"), "java/lang/Object\n");
        Process ended = new ProcessBuilder("true").start();
        assertThat(ended.waitFor(10, TimeUnit.SECONDS)).isTrue();
        broken.recording(ended);
        for (int i = 0; i < 3; i++) {
            broken.tick(System.nanoTime());
        }
        assertThat(broken.state()).startsWith("off: the dump did not start");
        assertThat(progress).hasSize(1);
        assertThat(broken.options(true)).isEmpty();
        LabClassArchive off = new LabClassArchive(false, JAVA, someJar(), work, l -> { });
        assertThat(off.state()).isEqualTo("off");
        assertThat(off.options(true)).isEmpty();
        assertThat(Files.exists(work.resolve("worker.jsa"))).isFalse();
    }
}
