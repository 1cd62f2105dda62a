package dev.sluice;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * The one rule for the id lists the admin handles take ({@link QueueAdmin}, {@link GroupAdmin}): a null list or a
 * null id is bad input (the side's own code), at most {@link #MAX_IDS} ids, repeats count once, an empty list is 0.
 */
final class DeadLetterIds {
    /** The most ids one redrive or purge names, on both sides. */
    static final int MAX_IDS = 10_000;

    private DeadLetterIds() {
    }

    /** The distinct ids in ascending order; throws {@code code} for a null list, a null id or too many ids. */
    static List<Long> check(List<Long> ids, ErrorCode code, String what) {
        if (ids == null) {
            throw new SluiceException(code, what + " must not be null (pass an empty list for none)");
        }
        if (ids.size() > MAX_IDS) {
            throw new SluiceException(code, "at most " + MAX_IDS + " " + what + " at once (got " + ids.size() + ")");
        }
        TreeSet<Long> distinct = new TreeSet<>();
        for (Long id : ids) {
            if (id == null) {
                throw new SluiceException(code, what + " must not contain null");
            }
            distinct.add(id);
        }
        return new ArrayList<>(distinct);
    }
}
