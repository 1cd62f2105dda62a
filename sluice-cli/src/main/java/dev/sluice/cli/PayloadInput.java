package dev.sluice.cli;

import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * A payload read from a file or standard input, never more than the limit: at most limit + 1 bytes are
 * read, so {@code --file /dev/zero} is refused at once instead of filling memory. Problems are coded
 * (INVALID_ARGUMENT) and name the file cut to a fixed length.
 */
final class PayloadInput implements AutoCloseable {
    private final InputStream in;
    private final String what;

    private PayloadInput(InputStream in, String what) {
        this.in = in;
        this.what = what;
    }

    /** {@code file} when given, else standard input when {@code stdin}, else null (the payload is given as text). */
    static PayloadInput open(Path file, boolean stdin) {
        return file != null ? file(file) : stdin ? stdin() : null;
    }

    /** Opens {@code file} now, so a missing file is reported before any database work. */
    static PayloadInput file(Path file) {
        String shown = "the file '" + Terminal.echo(file.toString()) + "'";
        try {
            if (Files.isDirectory(file)) {
                throw new SluiceException(ErrorCode.INVALID_ARGUMENT, shown + " is a directory, not a payload file");
            }
            return new PayloadInput(Files.newInputStream(file), shown);
        } catch (NoSuchFileException e) {
            throw new SluiceException(ErrorCode.INVALID_ARGUMENT, shown + " does not exist");
        } catch (AccessDeniedException e) {
            throw new SluiceException(ErrorCode.INVALID_ARGUMENT, shown + " cannot be read (permission denied)");
        } catch (IOException e) {
            throw new SluiceException(ErrorCode.INVALID_ARGUMENT, shown + " cannot be read (" + e.getClass().getSimpleName() + ")");
        }
    }

    /** Standard input. */
    static PayloadInput stdin() {
        return new PayloadInput(System.in, "standard input");
    }

    /** The whole payload; INVALID_ARGUMENT when it holds more than {@code limit} bytes. */
    byte[] read(int limit) {
        byte[] bytes;
        try {
            bytes = in.readNBytes(limit + 1);
        } catch (IOException e) {
            throw new SluiceException(ErrorCode.INVALID_ARGUMENT, what + " cannot be read (" + e.getClass().getSimpleName() + ")");
        }
        if (bytes.length > limit) {
            throw new SluiceException(ErrorCode.INVALID_ARGUMENT, what + " holds more than " + limit
                    + " bytes, the payload limit here (stopped reading there); nothing was written");
        }
        return bytes;
    }

    @Override
    public void close() {
        try {
            in.close();
        } catch (IOException e) {
            // Reading is done; a failed close changes nothing.
        }
    }
}
