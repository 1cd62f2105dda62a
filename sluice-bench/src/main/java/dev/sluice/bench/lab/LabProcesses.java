package dev.sluice.bench.lab;

import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The lab's worker processes ({@link LabWorker}): starts the producers and consumers as separate JVMs, each logging
 * to {@code <name>.log} in the work directory, kills a consumer for the orchestrator's fault schedule, replaces
 * consumers that end on their own, and stops them at the end.
 */
final class LabProcesses {
    private record Proc(String name, Process process) {
    }

    private final LabOptions o;
    private final Path work;
    private final String url;
    private final Consumer<String> progress;
    private final List<Proc> consumers = new ArrayList<>();
    private final List<Proc> producers = new ArrayList<>();
    /** Worker processes that ended on their own (not killed or stopped by the orchestrator): name, exit code. */
    private final Map<String, Integer> exits = new LinkedHashMap<>();
    private final String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    private final LabClassArchive archive;
    private int instances;

    LabProcesses(LabOptions o, Path work, String url, Consumer<String> progress, boolean classArchive) {
        this.o = o;
        this.work = work;
        this.url = url;
        this.progress = progress;
        this.archive = new LabClassArchive(classArchive, java, System.getProperty("java.class.path"), work, progress);
    }

    /** On the orchestrator's loop: the class archive's dump ({@link LabClassArchive#tick}). */
    void tick(long now) {
        archive.tick(now);
    }

    /** What became of the workers' class archive ({@link LabClassArchive#state}). */
    String classArchive() {
        return archive.state();
    }

    /** Starts the consumers, then the producers. */
    void start() throws IOException {
        for (int i = 0; i < o.consumers(); i++) {
            addConsumer();
        }
        for (int i = 0; i < o.producers(); i++) {
            producers.add(spawn("producer"));
        }
    }

    /** Starts one more consumer process. */
    void addConsumer() throws IOException {
        consumers.add(spawn("consumer"));
    }

    /** SIGKILLs a random consumer (no shutdown hook, no release of leases) and waits until it is gone; its name. */
    String killConsumer(Random random) throws InterruptedException {
        Proc victim = consumers.remove(random.nextInt(consumers.size()));
        victim.process().destroyForcibly();
        victim.process().waitFor(10, TimeUnit.SECONDS);
        return victim.name();
    }

    /**
     * Replaces consumer processes that ended on their own — one starting while its connections were terminated or
     * the server restarted gives up — so the run keeps its consumers; notes producers that ended before their time.
     * Either is reported ({@code worker_exits}), never hidden: a consumer short for the rest of the run would look
     * like an engine that cannot keep up.
     */
    void replaceExited() throws IOException {
        for (int i = 0; i < consumers.size(); i++) {
            Proc p = consumers.get(i);
            if (!p.process().isAlive()) {
                exits.put(p.name(), p.process().exitValue());
                progress.accept("lab: consumer " + p.name() + " exited on its own (code " + p.process().exitValue()
                        + ", see its log); started another");
                consumers.set(i, spawn("consumer"));
            }
        }
        for (Proc p : producers) {
            if (!p.process().isAlive() && p.process().exitValue() != 0 && !exits.containsKey(p.name())) {
                exits.put(p.name(), p.process().exitValue());
                progress.accept("lab: producer " + p.name() + " exited before its time (code " + p.process().exitValue()
                        + ", see its log)");
            }
        }
    }

    /** The worker processes running now (for {@link LabCpu}). */
    List<LabCpu.Worker> workers() {
        List<LabCpu.Worker> out = new ArrayList<>();
        consumers.forEach(p -> out.add(new LabCpu.Worker(true, p.process().toHandle())));
        producers.forEach(p -> out.add(new LabCpu.Worker(false, p.process().toHandle())));
        return out;
    }

    /** The processes that ended on their own so far: name, exit code. */
    Map<String, Integer> exits() {
        return Map.copyOf(exits);
    }

    /** Waits (up to a minute each) for the producers to finish their run. */
    void awaitProducers() throws InterruptedException {
        for (Proc p : producers) {
            p.process().waitFor(60, TimeUnit.SECONDS);
        }
    }

    /** SIGTERM to every consumer (its shutdown hook drains), SIGKILL to those not gone after 20 s. */
    void stopConsumers() throws InterruptedException {
        for (Proc p : consumers) {
            p.process().destroy();
        }
        for (Proc p : consumers) {
            if (!p.process().waitFor(20, TimeUnit.SECONDS)) {
                p.process().destroyForcibly();
            }
        }
    }

    /** SIGKILL to every process still running. */
    void stopAll() {
        archive.close();
        for (List<Proc> list : List.of(producers, consumers)) {
            for (Proc p : list) {
                p.process().destroyForcibly();
            }
        }
    }

    private Proc spawn(String role) throws IOException {
        String name = role.charAt(0) + "" + (++instances);
        boolean consumer = role.equals("consumer");
        // Timestamped logs, with Sluice's consumer events (takeovers, leases lost), to line up with the ledger.
        // The client JIT only and the serial collector: a worker starts every kill interval on a machine the run keeps
        // busy, and the server JIT's and parallel collector's threads compete with the run for its cores.
        List<String> cmd = new ArrayList<>(List.of(java, "-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"));
        List<String> sharing = archive.options(consumer);
        cmd.addAll(sharing);
        cmd.addAll(List.of("-Dorg.slf4j.simpleLogger.showDateTime=true",
                "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
                "-Dorg.slf4j.simpleLogger.log.dev.sluice.internal.consume=debug",
                "-cp", System.getProperty("java.class.path"), LabWorker.class.getName(),
                role, name, Long.toString(o.duration().toMillis()), Integer.toString(o.rate()),
                Double.toString(o.failureRate()), Double.toString(o.hangRate()), Double.toString(o.longTransactions()),
                Long.toString(o.leaseTimeout().toMillis()), Long.toString(o.seed()), String.join(",", o.engines()),
                Integer.toString(o.jobRate())));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        // The URL may carry the embedded server's password: the environment, unlike argv, is the owner's only.
        pb.environment().put(LabWorker.URL_ENV, url);
        File log = work.resolve(name + ".log").toFile();
        pb.redirectErrorStream(true);
        pb.redirectOutput(ProcessBuilder.Redirect.appendTo(log));
        Process p = pb.start();
        if (sharing.stream().anyMatch(a -> a.startsWith("-XX:DumpLoadedClassList"))) {
            archive.recording(p);
        }
        return new Proc(name, p);
    }
}
