package dev.sluice.embedded;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystem;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import java.util.UUID;

/** POSIX owner and mode checks for the files and directories that keep other local users out. */
final class FilePermissions {
    private static final Set<PosixFilePermission> OWNER_RW = PosixFilePermissions.fromString("rw-------");

    private FilePermissions() {
    }

    static boolean posix(FileSystem fs) {
        return fs.supportedFileAttributeViews().contains("posix");
    }

    /**
     * Fails unless {@code dir} is a real directory (not a link) owned by the current user, then takes
     * group and other access away.
     */
    static void requireOwnedPrivateDirectory(Path dir) throws IOException {
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            throw new IOException(dir + " is not a directory (a symbolic link is refused)");
        }
        Integer owner = (Integer) Files.getAttribute(dir, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        long me = currentUid();
        if (me >= 0 && owner != me) {
            throw new IOException(dir + " belongs to uid " + owner + ", not to the current user (uid " + me
                    + "); remove it or choose another directory");
        }
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
    }

    /** Writes {@code text} to {@code file} with mode 0600 from the start (a temporary file renamed into place). */
    static void writePrivate(Path file, String text) throws IOException {
        Path tmp = file.resolveSibling("." + file.getFileName() + "." + UUID.randomUUID() + ".tmp");
        try {
            if (posix(file.getFileSystem())) {
                Files.createFile(tmp, PosixFilePermissions.asFileAttribute(OWNER_RW));
            } else {
                Files.createFile(tmp);
            }
            Files.writeString(tmp, text, StandardCharsets.UTF_8);
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    /** The current user's uid, or -1 where the platform does not say. */
    static long currentUid() {
        try {
            return new com.sun.security.auth.module.UnixSystem().getUid();
        } catch (RuntimeException | LinkageError e) {
            return -1;
        }
    }
}
