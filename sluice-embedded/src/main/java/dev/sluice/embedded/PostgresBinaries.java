package dev.sluice.embedded;

import io.zonky.test.db.postgres.embedded.DefaultPostgresBinaryResolver;
import io.zonky.test.db.postgres.util.LinuxUtils;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import java.util.stream.Stream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.tukaani.xz.XZInputStream;

/**
 * The PostgreSQL binaries, extracted into a cache directory only the current user can write
 * ({@code ~/.cache/sluice/postgres}, mode 0700, ownership checked), so no other local account can
 * plant binaries the server would run. zonky's default is a shared, predictable directory under the
 * system temporary directory.
 */
final class PostgresBinaries {
    /** System property naming another cache directory (it gets the same ownership checks). */
    static final String CACHE_PROPERTY = "sluice.embedded.cache";

    private static final Logger log = LoggerFactory.getLogger(PostgresBinaries.class);
    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rwx------");
    private static Path prepared;
    private static volatile Path cacheRoot;

    private PostgresBinaries() {
    }

    /** The directory holding {@code bin/}, {@code lib/} and {@code share/}, extracting on first use. */
    static synchronized Path prepare() {
        if (prepared != null && Files.isDirectory(prepared.resolve("bin"))) {
            return prepared;
        }
        Path root = cacheRoot();
        privateDirectory(root);
        byte[] archive;
        String md5;
        try (InputStream in = DefaultPostgresBinaryResolver.INSTANCE.getPgBinary(os(), architecture())) {
            archive = in.readAllBytes();
            md5 = HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(archive));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the PostgreSQL binaries from the classpath", e);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        // zonky names the directory PG-<md5 of the archive> and skips extraction when it holds .exists.
        Path target = root.resolve("PG-" + md5);
        if (!Files.exists(target.resolve(".exists"))) {
            extract(archive, root, target);
        }
        prepared = target;
        return target;
    }

    /** The working directory to hand zonky: the private cache root. */
    static Path cacheRoot() {
        Path root = cacheRoot;
        if (root == null) {
            root = chooseCacheRoot();
            cacheRoot = root;
        }
        return root;
    }

    /**
     * The user's cache directory, or, when it cannot be created (a read-only or missing home, as on
     * some CI runners and service accounts), {@code <tmpdir>/sluice-<user>-postgres}: created 0700 and
     * refused by {@link #privateDirectory} when another user got there first.
     */
    private static Path chooseCacheRoot() {
        String override = System.getProperty(CACHE_PROPERTY);
        if (override != null && !override.isBlank()) {
            return Path.of(override).toAbsolutePath().normalize();
        }
        String xdg = System.getenv("XDG_CACHE_HOME");
        Path base = xdg != null && xdg.startsWith("/") ? Path.of(xdg)
                : Path.of(System.getProperty("user.home"), ".cache");
        Path preferred = base.resolve("sluice").resolve("postgres");
        try {
            Files.createDirectories(preferred.getParent());
            if (Files.isWritable(preferred.getParent())) {
                return preferred;
            }
        } catch (IOException | SecurityException e) {
            // fall through to the temporary directory
        }
        String user = System.getProperty("user.name", "user").replaceAll("[^A-Za-z0-9._-]", "_");
        Path fallback = Path.of(System.getProperty("java.io.tmpdir"), "sluice-" + user + "-postgres").toAbsolutePath();
        log.info("cannot create {}: the embedded PostgreSQL binaries go to {} instead", preferred.getParent(), fallback);
        return fallback;
    }

    /**
     * The command prefix for running a PostgreSQL program. As root on Linux, zonky runs them through
     * {@code unshare -U} (PostgreSQL refuses to run as root); Sluice's own calls do the same.
     */
    static List<String> command(Path pgDir, String program, String... args) {
        List<String> cmd = new ArrayList<>();
        if (isLinux() && LinuxUtils.isUnshareAvailable()) {
            cmd.add("unshare");
            cmd.add("-U");
        }
        cmd.add(pgDir.resolve("bin").resolve(program + (isWindows() ? ".exe" : "")).toString());
        cmd.addAll(List.of(args));
        return cmd;
    }

    /** Creates {@code dir} mode 0700 or checks that an existing one is the current user's and private. */
    static void privateDirectory(Path dir) {
        try {
            if (!FilePermissions.posix(dir.getFileSystem())) {
                Files.createDirectories(dir);
                return;
            }
            if (!Files.exists(dir)) {
                Files.createDirectories(dir.getParent());
                try {
                    Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
                } catch (FileAlreadyExistsException raced) {
                    // Another process created it at the same moment: the checks below judge it.
                }
            }
            FilePermissions.requireOwnedPrivateDirectory(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the private directory " + dir, e);
        }
    }

    /** Extracts into a fresh sibling directory and renames it into place, so a half extraction is never used. */
    private static void extract(byte[] archive, Path root, Path target) {
        Path tmp = root.resolve(".extract-" + UUID.randomUUID());
        try {
            if (FilePermissions.posix(root.getFileSystem())) {
                Files.createDirectory(tmp, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
            } else {
                Files.createDirectory(tmp);
            }
            try (TarArchiveInputStream tar = new TarArchiveInputStream(new XZInputStream(new ByteArrayInputStream(archive)))) {
                TarArchiveEntry entry;
                while ((entry = tar.getNextEntry()) != null) {
                    extractEntry(tar, entry, tmp);
                }
            }
            Files.createFile(tmp.resolve(".exists"));
            try {
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
            } catch (FileSystemException e) {
                // Another JVM extracted the same archive first; its copy is as good as ours.
                if (!Files.exists(target.resolve(".exists"))) {
                    throw e;
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot extract the PostgreSQL binaries into " + root, e);
        } finally {
            deleteTree(tmp);
        }
    }

    private static void extractEntry(TarArchiveInputStream tar, TarArchiveEntry entry, Path into) throws IOException {
        Path file = into.resolve(entry.getName()).normalize();
        if (!file.startsWith(into)) {
            throw new IOException("archive entry outside the target directory: " + entry.getName());
        }
        if (entry.isDirectory()) {
            Files.createDirectories(file);
        } else if (entry.isSymbolicLink() || entry.isLink()) {
            Path link = Path.of(entry.getLinkName());
            Path resolved = (entry.isSymbolicLink() ? file.getParent() : into).resolve(link).normalize();
            if (link.isAbsolute() || !resolved.startsWith(into)) {
                throw new IOException("archive link outside the target directory: " + entry.getName());
            }
            Files.createDirectories(file.getParent());
            if (entry.isSymbolicLink()) {
                Files.createSymbolicLink(file, link);
            } else {
                Files.createLink(file, resolved);
            }
        } else if (entry.isFile()) {
            Files.createDirectories(file.getParent());
            Files.copy(tar, file);
            if (FilePermissions.posix(file.getFileSystem())) {
                // Keep the archive's execute bits; never group or other write.
                boolean exec = (entry.getMode() & 0100) != 0 || entry.getName().matches("(\\./)?bin/.*");
                Files.setPosixFilePermissions(file, PosixFilePermissions.fromString(exec ? "rwxr-xr-x" : "rw-r--r--"));
            } else if (entry.getName().matches("(\\./)?bin/.*")) {
                file.toFile().setExecutable(true, true);
            }
        } else {
            throw new IOException("unsupported archive entry: " + entry.getName());
        }
    }

    static void deleteTree(Path dir) {
        if (!Files.exists(dir, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + dir, e);
        }
    }

    static boolean isLinux() {
        return System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("linux");
    }

    static boolean isWindows() {
        return System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("windows");
    }

    private static String os() {
        String name = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        if (name.startsWith("windows")) {
            return "Windows";
        }
        return name.startsWith("mac") ? "Darwin" : "Linux";
    }

    private static String architecture() {
        String arch = System.getProperty("os.arch");
        return "amd64".equals(arch) ? "x86_64" : arch;
    }
}
