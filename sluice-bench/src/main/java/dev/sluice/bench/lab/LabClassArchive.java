package dev.sluice.bench.lab;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Class data sharing for the lab's worker JVMs (docs/reliability-lab.md, "Where the CPU goes"). A consumer starts every
 * kill interval on a machine the run keeps full, and loading and verifying its classes is a large part of what its start
 * costs. The first consumer records the classes it loads ({@code -XX:DumpLoadedClassList}); once it has run for
 * {@link #RECORD_NANOS} (or ended) the orchestrator dumps them into an archive in the work directory ({@code -Xshare:dump},
 * one short JVM, in the background), and every worker started after that maps the archive
 * ({@code -XX:SharedArchiveFile}) instead of loading those classes from the jar.
 *
 * <p>Only a class path of jar files can be archived (the packaged {@code sluice.jar}); with class directories (a build's
 * {@code target/classes}, as in the tests) or a failed dump, the workers run as before and the summary says why.
 */
final class LabClassArchive {
    static final long RECORD_NANOS = TimeUnit.SECONDS.toNanos(20);
    /** The dump's own time limit; a dump that takes longer is given up (the workers run without the archive). */
    private static final long DUMP_LIMIT_SECONDS = 120;

    private final String java;
    private final String classPath;
    private final Path list;
    private final Path complete;
    private final Path archive;
    private final Consumer<String> progress;
    private final boolean enabled;
    private Process recorder;
    private long recordingSince;
    private Process dump;
    private long dumpSince;
    private volatile String state;

    /**
     * @param enabled whether to try; also false when the class path holds anything but jar files
     */
    LabClassArchive(boolean enabled, String java, String classPath, Path work, Consumer<String> progress) {
        this.java = java;
        this.classPath = classPath;
        this.list = work.resolve("worker.classlist");
        this.complete = work.resolve("worker.classlist.complete");
        this.archive = work.resolve("worker.jsa");
        this.progress = progress;
        String why = !enabled ? "off" : jarsOnly(classPath) ? null : "off: the class path is not all jar files";
        this.enabled = why == null;
        this.state = why == null ? "recording" : why;
    }

    private static boolean jarsOnly(String classPath) {
        for (String entry : classPath.split(File.pathSeparator)) {
            if (!entry.endsWith(".jar") || !Files.isRegularFile(Path.of(entry))) {
                return false;
            }
        }
        return !classPath.isEmpty();
    }

    /** The JVM options of a new worker: the first consumer records the class list; once dumped, every one maps it. */
    synchronized List<String> options(boolean consumer) {
        List<String> out = new ArrayList<>();
        if (!enabled) {
            return out;
        }
        if (state.equals("in use")) {
            out.add("-XX:SharedArchiveFile=" + archive);
        } else if (consumer && recorder == null) {
            out.add("-XX:DumpLoadedClassList=" + list);
        }
        return out;
    }

    /** The first consumer was started with the recording option. */
    synchronized void recording(Process p) {
        if (enabled && recorder == null && state.equals("recording")) {
            recorder = p;
            recordingSince = System.nanoTime();
        }
    }

    /** On the orchestrator's loop: starts the dump once the recorder ran long enough, and notes when it is done. */
    synchronized void tick(long now) {
        if (state.equals("recording") && recorder != null && (now - recordingSince >= RECORD_NANOS || !recorder.isAlive())) {
            startDump(now); // once: it leaves "recording" for "dumping", or for "off: why"
        } else if (state.equals("dumping")) {
            if (dump.isAlive() && now - dumpSince > TimeUnit.SECONDS.toNanos(DUMP_LIMIT_SECONDS)) {
                dump.destroyForcibly();
                failed("the dump took over " + DUMP_LIMIT_SECONDS + " s");
            } else if (!dump.isAlive()) {
                if (dump.exitValue() == 0 && Files.isRegularFile(archive)) {
                    state = "in use";
                    progress.accept("lab: worker class archive ready (" + classes() + " classes recorded); workers started"
                            + " from now on map it");
                } else {
                    failed("the dump exited with " + dump.exitValue() + " (see class-archive.log)");
                }
            }
        }
    }

    private void startDump(long now) {
        try {
            // The recorder may still be appending: dump only complete lines.
            String text = Files.readString(list, StandardCharsets.UTF_8);
            Files.writeString(complete, text.substring(0, text.lastIndexOf('\n') + 1), StandardCharsets.UTF_8);
            ProcessBuilder pb = new ProcessBuilder(java, "-Xshare:dump", "-XX:SharedClassListFile=" + complete,
                    "-XX:SharedArchiveFile=" + archive, "-cp", classPath);
            pb.redirectErrorStream(true);
            pb.redirectOutput(ProcessBuilder.Redirect.appendTo(list.resolveSibling("class-archive.log").toFile()));
            dump = pb.start();
            dumpSince = now;
            state = "dumping";
        } catch (IOException | RuntimeException e) {
            failed("the dump did not start: " + e.getMessage());
        }
    }

    private void failed(String why) {
        state = "off: " + why;
        progress.accept("lab: worker class archive " + state + "; workers start without it");
    }

    private long classes() {
        try (var s = Files.lines(complete)) {
            return s.filter(l -> !l.startsWith("#") && !l.startsWith("@")).count();
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** What became of the archive: {@code in use}, {@code recording}, {@code dumping} or {@code off: why}. */
    String state() {
        return state;
    }

    /** Ends a dump still running (the run is over). */
    synchronized void close() {
        if (dump != null && dump.isAlive()) {
            dump.destroyForcibly();
        }
    }
}
