package dev.sluice.internal.catalog;

import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import dev.sluice.internal.text.Echo;
import java.util.regex.Pattern;

/** Validation of user-chosen names (streams, groups, queues, schedules, locks), before any round trip. */
public final class Names {
    /** The pattern every user-chosen name matches. */
    public static final Pattern NAME = Pattern.compile("^[a-z0-9][a-z0-9._-]{0,127}$");
    /** Prefix of the built-in streams; user names cannot take it (the pattern already forbids a leading '_'). */
    public static final String RESERVED_PREFIX = "__system.";

    private Names() {
    }

    /** Returns {@code name} if it is a valid user name of the given kind, else raises {@link ErrorCode#INVALID_NAME}. */
    public static String validate(String kind, String name) {
        if (name == null) {
            throw new SluiceException(ErrorCode.INVALID_NAME, kind + " name must not be null");
        }
        if (!NAME.matcher(name).matches()) {
            throw new SluiceException(ErrorCode.INVALID_NAME, kind + " name '" + Echo.of(name)
                    + "' must match " + NAME.pattern());
        }
        return name;
    }
}
