package dev.sluice.internal.schema;

import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Writes an export's files into a folder without ever replacing a different file: migration tools keep checksums of
 * the files they applied, so a silently rewritten file would break the owner's next deployment. Every file is checked
 * before any is written, so a conflict leaves the folder as it was; a file that is already there with the same
 * content is left alone (exporting again is idempotent).
 */
public final class ExportWriter {
    /** How many conflicting files the error names. */
    private static final int SHOWN = 3;

    private ExportWriter() {
    }

    /** One file of the export and whether this run wrote it ({@code false}: it was there already, identical). */
    public record Written(Path path, boolean created) {
    }

    /**
     * Writes {@code files} under {@code dir} (created when missing). Raises {@link ErrorCode#INVALID_ARGUMENT} when
     * {@code dir} is not a writable folder and {@link ErrorCode#MIGRATION_FILE_CONFLICT} when a file exists with other
     * content.
     */
    public static List<Written> write(Path dir, List<MigrationExport.File> files) {
        Path folder = folder(dir);
        List<Path> targets = new ArrayList<>();
        List<Boolean> present = new ArrayList<>();
        List<String> conflicts = new ArrayList<>();
        for (MigrationExport.File f : files) {
            Path target = folder.resolve(f.path());
            targets.add(target);
            boolean exists = Files.exists(target, LinkOption.NOFOLLOW_LINKS);
            present.add(exists);
            if (exists && !sameContent(target, f.content())) {
                conflicts.add(target.toString());
            }
        }
        if (!conflicts.isEmpty()) {
            throw new SluiceException(ErrorCode.MIGRATION_FILE_CONFLICT, conflicts.size() + " file(s) of the export exist with"
                    + " other content (" + String.join(", ", conflicts.subList(0, Math.min(SHOWN, conflicts.size())))
                    + (conflicts.size() > SHOWN ? ", ..." : "") + "); nothing was written");
        }
        List<Written> out = new ArrayList<>();
        for (int i = 0; i < files.size(); i++) {
            Path target = targets.get(i);
            if (!present.get(i)) {
                create(target, files.get(i).content());
            }
            out.add(new Written(target, !present.get(i)));
        }
        return out;
    }

    /** The output folder, created when missing; anything that is not a writable folder is refused. */
    private static Path folder(Path dir) {
        if (dir == null) {
            throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "the export needs an output folder (--out DIR)");
        }
        Path folder = dir.toAbsolutePath().normalize();
        if (Files.exists(folder) && !Files.isDirectory(folder)) {
            throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "output '" + dir + "' is not a folder");
        }
        try {
            Files.createDirectories(folder);
        } catch (IOException | SecurityException e) {
            throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "cannot create output folder '" + dir + "': " + e, e);
        }
        if (!Files.isWritable(folder)) {
            throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "output folder '" + dir + "' is not writable");
        }
        return folder;
    }

    private static boolean sameContent(Path target, String content) {
        if (!Files.isRegularFile(target, LinkOption.NOFOLLOW_LINKS)) {
            return false; // a folder or a link where a file belongs is someone else's
        }
        try {
            return Arrays.equals(Files.readAllBytes(target), content.getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "cannot read '" + target + "': " + e, e);
        }
    }

    /**
     * Writes through a temporary file and a rename, so an interrupted export never leaves a half file that a later
     * run would have to refuse as a conflict; the rename does not replace a file that appeared meanwhile.
     */
    private static void create(Path target, String content) {
        Path tmp = null;
        try {
            Files.createDirectories(target.getParent());
            tmp = Files.createTempFile(target.getParent(), ".sluice-export-", ".tmp");
            Files.writeString(tmp, content, StandardCharsets.UTF_8);
            Files.move(tmp, target);
            tmp = null;
        } catch (java.nio.file.FileAlreadyExistsException e) {
            if (!sameContent(target, content)) {
                throw new SluiceException(ErrorCode.MIGRATION_FILE_CONFLICT, "'" + target + "' appeared during the export"
                        + " with other content", e);
            }
        } catch (IOException e) {
            throw new SluiceException(ErrorCode.INVALID_ARGUMENT, "cannot write '" + target + "': " + e, e);
        } finally {
            if (tmp != null) {
                try {
                    Files.deleteIfExists(tmp);
                } catch (IOException e) {
                    // best effort: a stray temporary file is harmless
                }
            }
        }
    }
}
