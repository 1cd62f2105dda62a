package dev.sluice;

import dev.sluice.internal.catalog.Names;
import dev.sluice.internal.schedule.DueTimes;
import dev.sluice.internal.text.Echo;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.ZoneId;
import java.util.Arrays;
import java.util.Objects;

/**
 * What a schedule fires, when, and into what: a spec for {@link Schedule#register(ScheduleSpec)}. Every
 * field is checked when it is built, before any round trip ({@link ErrorCode#INVALID_SCHEDULE},
 * {@link ErrorCode#INVALID_NAME}, {@link ErrorCode#PAYLOAD_NOT_SERIALIZABLE}).
 *
 * <pre>{@code
 * ScheduleSpec nightly = ScheduleSpec.cron("0 2 * * *").zone("Europe/Berlin")
 *         .toQueue("reports").payload(new ReportRequest("daily")).build();
 * ScheduleSpec tick = ScheduleSpec.every(Duration.ofSeconds(5)).toStream("ticks").build();
 * }</pre>
 *
 * @param expression  a cron expression — 5 fields ({@code min hour day-of-month month day-of-week}) or 6 with
 *                    seconds first, or a nickname ({@code @hourly}, {@code @daily}, {@code @weekly},
 *                    {@code @monthly}, {@code @yearly}) — or {@code @every <n>{s|m|h|d}}. An {@code @every}
 *                    schedule is due at whole multiples of its interval since the Unix epoch (UTC), so
 *                    {@code @every 5m} fires at :00, :05, :10 … in every process alike
 * @param zone        the zone cron fields are read in (default UTC; {@code @every} ignores it); a leading
 *                    {@code TZ=Zone } in the expression sets it too
 * @param target      the stream or queue each fire lands in
 * @param payload     the bytes of every fire (default empty)
 * @param contentType the content type stored with every fire (default {@code application/octet-stream})
 * @param misfire     what runs after downtime (default {@link Misfire#SKIP}: only the newest missed due time)
 */
public record ScheduleSpec(String expression, ZoneId zone, Target target, byte[] payload, String contentType,
                           Misfire misfire) {

    /** Checks every field (no I/O) and normalizes the expression ({@code TZ=} prefix, surrounding spaces). */
    public ScheduleSpec {
        if (expression == null || expression.isBlank()) {
            throw invalid("a schedule needs a cron expression or '@every <n>{s|m|h|d}'");
        }
        String e = expression.strip();
        if (e.startsWith("TZ=") || e.startsWith("CRON_TZ=")) {
            int space = e.indexOf(' ');
            if (space < 0) {
                throw invalid("'" + Echo.of(e) + "' has a zone but no cron fields");
            }
            ZoneId prefixed = zoneOf(e.substring(e.indexOf('=') + 1, space));
            if (zone != null && !zone.equals(prefixed)) {
                throw invalid("the expression names zone " + prefixed + " but the spec names " + zone);
            }
            zone = prefixed;
            e = e.substring(space + 1).strip();
        }
        expression = e;
        zone = zone == null ? ZoneId.of("UTC") : zone;
        if (target == null) {
            throw invalid("a schedule needs a target: toStream(name) or toQueue(name)");
        }
        payload = payload == null ? new byte[0] : payload.clone();
        if (contentType == null || contentType.isBlank()) {
            contentType = Serde.bytes().contentType();
        }
        if (contentType.length() > 256) {
            throw invalid("the content type is longer than 256 characters");
        }
        misfire = misfire == null ? Misfire.SKIP : misfire;
        DueTimes.parse(expression, zone);
    }

    /** A builder for a cron schedule (5 fields, or 6 with seconds first); see {@link #expression()}. */
    public static Builder cron(String expression) {
        return new Builder().expression(expression);
    }

    /** A builder for a schedule due every {@code interval} (whole seconds, at least one). */
    public static Builder every(Duration interval) {
        Objects.requireNonNull(interval, "interval");
        if (interval.getNano() != 0 || interval.getSeconds() < 1) {
            throw invalid("an @every interval is a positive whole number of seconds (got " + interval + ")");
        }
        return new Builder().expression("@every " + interval.getSeconds() + "s");
    }

    /** A builder for any expression (cron or {@code @every}); see {@link #expression()}. */
    public static Builder builder(String expression) {
        return new Builder().expression(expression);
    }

    /** The interval between two due times of an {@code @every} schedule, or null for cron. */
    public Duration interval() {
        return DueTimes.parse(expression, zone).interval();
    }

    /** A builder starting from this spec. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.expression = expression;
        b.zone = zone;
        b.target = target;
        b.payload = payload;
        b.contentType = contentType;
        b.misfire = misfire;
        return b;
    }

    @Override
    public byte[] payload() {
        return payload.clone();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ScheduleSpec s && expression.equals(s.expression) && zone.equals(s.zone)
                && target.equals(s.target) && Arrays.equals(payload, s.payload) && contentType.equals(s.contentType)
                && misfire.equals(s.misfire);
    }

    @Override
    public int hashCode() {
        return Objects.hash(expression, zone, target, Arrays.hashCode(payload), contentType, misfire);
    }

    @Override
    public String toString() {
        return "ScheduleSpec[" + expression + " " + zone + " -> " + target + ", " + payload.length + " bytes "
                + contentType + ", " + misfire + "]";
    }

    private static ZoneId zoneOf(String zone) {
        try {
            return ZoneId.of(zone);
        } catch (DateTimeException e) {
            throw new SluiceException(ErrorCode.INVALID_SCHEDULE, "unknown time zone '" + Echo.of(zone) + "'", e);
        }
    }

    static SluiceException invalid(String problem) {
        return new SluiceException(ErrorCode.INVALID_SCHEDULE, problem);
    }

    /**
     * Where a schedule's fires land: a stream (a message; its idempotency key is derived from the schedule
     * and the due time) or a job queue (a job, due at once; its unique key is derived the same way).
     *
     * @param kind the kind of target
     * @param name the stream's or queue's name
     */
    public record Target(Kind kind, String name) {
        /** The kinds of target. */
        public enum Kind { STREAM, QUEUE }

        /** Checks the name ({@link ErrorCode#INVALID_NAME}). */
        public Target {
            Objects.requireNonNull(kind, "kind");
            Names.validate(kind == Kind.STREAM ? "stream" : "queue", name);
        }

        /** Fires produce one message each to this stream (which must exist when the schedule is registered). */
        public static Target stream(String name) {
            return new Target(Kind.STREAM, name);
        }

        /** Fires enqueue one job each to this queue. */
        public static Target queue(String name) {
            return new Target(Kind.QUEUE, name);
        }

        @Override
        public String toString() {
            return kind.name().toLowerCase(java.util.Locale.ROOT) + ":" + name;
        }
    }

    /**
     * What runs after the runners were down (or the schedule's fire failed) across several due times.
     * Suspending and resuming never catches up: missed due times are dropped on resume.
     *
     * @param maxFires how many of the newest missed due times fire (1 to 1000); the older ones are dropped
     */
    public record Misfire(int maxFires) {
        /** Only the newest missed due time fires (the default). */
        public static final Misfire SKIP = new Misfire(1);
        /** The largest catch-up bound. */
        public static final int MAX_CATCH_UP = 1000;

        /** Checks the bound ({@link ErrorCode#INVALID_SCHEDULE}). */
        public Misfire {
            if (maxFires < 1 || maxFires > MAX_CATCH_UP) {
                throw invalid("a catch-up bound is 1 to " + MAX_CATCH_UP + " fires (got " + maxFires + ")");
            }
        }

        /** Up to {@code maxFires} of the newest missed due times fire, oldest first, each with its own key. */
        public static Misfire catchUp(int maxFires) {
            return new Misfire(maxFires);
        }

        /** Whether this is {@link #SKIP}. */
        public boolean skip() {
            return maxFires == 1;
        }

        @Override
        public String toString() {
            return skip() ? "skip" : "catch-up(" + maxFires + ")";
        }
    }

    /** Builds a {@link ScheduleSpec}; {@link #build()} checks it. */
    public static final class Builder {
        private String expression;
        private ZoneId zone;
        private Target target;
        private byte[] payload;
        private String contentType;
        private Misfire misfire;

        private Builder() {
        }

        /** The cron or {@code @every} expression. */
        public Builder expression(String expression) {
            this.expression = expression;
            return this;
        }

        /** The zone cron fields are read in (default UTC). */
        public Builder zone(ZoneId zone) {
            this.zone = zone;
            return this;
        }

        /** The zone by IANA name, e.g. {@code Europe/Berlin} ({@link ErrorCode#INVALID_SCHEDULE} when unknown). */
        public Builder zone(String zone) {
            this.zone = zone == null ? null : zoneOf(zone);
            return this;
        }

        /** Fires land in this stream. */
        public Builder toStream(String stream) {
            this.target = Target.stream(stream);
            return this;
        }

        /** Fires land in this job queue. */
        public Builder toQueue(String queue) {
            this.target = Target.queue(queue);
            return this;
        }

        /** Fires land here. */
        public Builder target(Target target) {
            this.target = target;
            return this;
        }

        /** The exact bytes of every fire, with their content type. */
        public Builder payload(byte[] payload, String contentType) {
            this.payload = Objects.requireNonNull(payload, "payload").clone();
            this.contentType = contentType;
            return this;
        }

        /**
         * Any payload, encoded once now by the default serde of its type ({@link Serde#forType}: a String is
         * UTF-8 text, a byte array passes through, anything else is JSON).
         */
        @SuppressWarnings("unchecked")
        public Builder payload(Object payload) {
            Objects.requireNonNull(payload, "payload");
            return payload(payload, (Serde<Object>) Serde.forType(payload.getClass()));
        }

        /** A payload encoded once now by this serde. */
        public <T> Builder payload(T payload, Serde<T> serde) {
            Objects.requireNonNull(payload, "payload");
            Objects.requireNonNull(serde, "serde");
            byte[] bytes;
            try {
                bytes = serde.serialize(payload);
            } catch (Exception e) {
                throw new SluiceException(ErrorCode.PAYLOAD_NOT_SERIALIZABLE, "the schedule payload of type "
                        + payload.getClass().getName() + " could not be serialized: " + e.getClass().getSimpleName(), e);
            }
            if (bytes == null) {
                throw new SluiceException(ErrorCode.NULL_PAYLOAD, "the serde returned no bytes");
            }
            this.payload = bytes;
            this.contentType = serde.contentType();
            return this;
        }

        /** After downtime only the newest missed due time fires (the default). */
        public Builder skipMissed() {
            this.misfire = Misfire.SKIP;
            return this;
        }

        /** After downtime up to {@code maxFires} of the newest missed due times fire (1 to 1000). */
        public Builder catchUp(int maxFires) {
            this.misfire = Misfire.catchUp(maxFires);
            return this;
        }

        /** The misfire policy. */
        public Builder misfire(Misfire misfire) {
            this.misfire = misfire;
            return this;
        }

        /** Checks and builds the spec. */
        public ScheduleSpec build() {
            return new ScheduleSpec(expression, zone, target, payload, contentType, misfire);
        }
    }
}
