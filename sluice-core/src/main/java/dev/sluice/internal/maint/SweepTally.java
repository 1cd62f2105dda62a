package dev.sluice.internal.maint;

import dev.sluice.StreamInfo;

/**
 * What one sweep of a {@link Janitor} pass did: rows or partitions, its first failure (with how many streams failed),
 * and the first stream whose work this database user may not do (reported as skipped: a runtime role's pass is not a
 * failure because the migration role's work was left to it).
 */
final class SweepTally {
    /** Rows or partitions the sweep removed (or made). */
    long removed;
    String firstError;
    int failures;
    String firstSkip;
    int skips;

    void fail(StreamInfo s, RuntimeException e) {
        failures++;
        if (firstError == null) {
            String text = e.getMessage() == null ? e.toString() : e.getMessage();
            boolean named = s == null || text.contains("'" + s.name() + "'");
            firstError = named ? text : "stream '" + s.name() + "': " + text;
        }
    }

    String error() {
        if (firstError == null) {
            return null;
        }
        return Janitor.clean(failures > 1 ? firstError + " (and " + (failures - 1) + " more)" : firstError);
    }

    /** A stream this user may not do the sweep's work for: reported as skipped, not failed. */
    void skip(StreamInfo s, String why) {
        skips++;
        if (firstSkip == null) {
            firstSkip = "stream '" + s.name() + "': " + why;
        }
    }

    String skipped() {
        if (firstSkip == null) {
            return null;
        }
        return Janitor.clean(skips > 1 ? firstSkip + " (and " + (skips - 1) + " more)" : firstSkip);
    }
}
