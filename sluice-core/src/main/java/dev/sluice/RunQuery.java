package dev.sluice;

import java.time.Instant;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/**
 * A filter and page of a queue's run records ({@link Queue#runs(RunQuery)}), newest first, keyset-paged by
 * {@code (finished_at, id)}: pass the previous page's {@link Page#next()} as the cursor. All filters are optional and
 * combine with AND; a cursor is bound to nothing but the position, so keep the filters of the first page.
 *
 * @param statuses    ended statuses to include (empty: all)
 * @param since       finished at or after this instant, or {@code null}
 * @param until       finished before this instant, or {@code null}
 * @param uniqueKey   only the runs of jobs with this unique key, or {@code null}
 * @param headerName  with {@code headerValue}: only the runs whose headers hold this pair, or {@code null}
 * @param headerValue the header's value (set both or neither)
 * @param cursor      the page to read ({@link Page#next()} of the previous one), or {@code null} for the first
 * @param limit       runs per page, 1 to 1000 (default 100)
 */
public record RunQuery(Set<RunStatus> statuses, Instant since, Instant until, String uniqueKey, String headerName,
                       String headerValue, String cursor, int limit) {
    /** The largest page. */
    public static final int MAX_LIMIT = 1000;
    /** The default page size. */
    public static final int DEFAULT_LIMIT = 100;

    /**
     * Checks the query.
     *
     * @throws SluiceException {@link ErrorCode#INVALID_ARGUMENT} for a live status, a limit out of range, an empty
     *                         range, or a header name without a value
     */
    public RunQuery {
        statuses = statuses == null || statuses.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(statuses));
        for (RunStatus s : statuses) {
            if (!s.ended()) {
                throw invalid("runs lists ended runs only; '" + s.dbValue() + "' is a live status (read a live job with run(id))");
            }
        }
        if (limit < 1 || limit > MAX_LIMIT) {
            throw invalid("limit must be between 1 and " + MAX_LIMIT + " (got " + limit + ")");
        }
        if (since != null && until != null && !until.isAfter(since)) {
            throw invalid("until (" + until + ") must be after since (" + since + ")");
        }
        if ((headerName == null) != (headerValue == null)) {
            throw invalid("a header filter needs both a name and a value");
        }
    }

    private static SluiceException invalid(String problem) {
        return new SluiceException(ErrorCode.INVALID_ARGUMENT, problem);
    }

    /** Every ended run, the first page of {@link #DEFAULT_LIMIT}. */
    public static RunQuery all() {
        return builder().build();
    }

    /** A builder with no filters. */
    public static Builder builder() {
        return new Builder();
    }

    /** This query at another page. */
    public RunQuery page(String cursor) {
        return new RunQuery(statuses, since, until, uniqueKey, headerName, headerValue, cursor, limit);
    }

    /** Builds a {@link RunQuery}. */
    public static final class Builder {
        private final Set<RunStatus> statuses = EnumSet.noneOf(RunStatus.class);
        private Instant since;
        private Instant until;
        private String uniqueKey;
        private String headerName;
        private String headerValue;
        private String cursor;
        private int limit = DEFAULT_LIMIT;

        private Builder() {
        }

        /** Adds a status to include. */
        public Builder status(RunStatus status) {
            statuses.add(Objects.requireNonNull(status, "status"));
            return this;
        }

        /** Finished at or after this instant. */
        public Builder since(Instant since) {
            this.since = since;
            return this;
        }

        /** Finished before this instant. */
        public Builder until(Instant until) {
            this.until = until;
            return this;
        }

        /** Only runs of jobs with this unique key. */
        public Builder uniqueKey(String uniqueKey) {
            this.uniqueKey = uniqueKey;
            return this;
        }

        /** Only runs whose headers hold this pair. */
        public Builder header(String name, String value) {
            this.headerName = name;
            this.headerValue = value;
            return this;
        }

        /** The page to read. */
        public Builder cursor(String cursor) {
            this.cursor = cursor;
            return this;
        }

        /** Runs per page. */
        public Builder limit(int limit) {
            this.limit = limit;
            return this;
        }

        /** Checks and builds the query. */
        public RunQuery build() {
            return new RunQuery(statuses, since, until, uniqueKey, headerName, headerValue, cursor, limit);
        }
    }
}
