package dev.sluice.server.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.sluice.ErrorCode;
import dev.sluice.SluiceException;
import io.javalin.http.Context;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Errors as JSON {@code {"error":{"code","name","problem","retryable","fix"}}} with the status that fits the
 * code. The problem text is the library's own (which echoes input cut and cleaned, never a payload or a
 * token); an unexpected exception shows no text at all, only that the server failed, and is logged.
 */
public final class ApiErrors {
    private static final Logger log = LoggerFactory.getLogger(ApiErrors.class);

    private ApiErrors() {
    }

    /** The HTTP status for {@code code}. */
    public static int status(ErrorCode code) {
        return switch (code) {
            case UNAUTHORIZED -> 401;
            case FORBIDDEN, DESTROY_NOT_ALLOWED, PERMISSION_DENIED, PARTITION_NOT_CREATABLE -> 403;
            case PAYLOAD_TOO_LARGE, REQUEST_TOO_LARGE -> 413;
            case TOO_MANY_REQUESTS, PRODUCER_BUFFER_FULL -> 429;
            case DATABASE_UNAVAILABLE, COMMIT_OUTCOME_UNKNOWN, CLIENT_CLOSED, DATABASE_OLDER, DATABASE_NEWER,
                 MIGRATION_LOCK_TIMEOUT, PARTITION_UNAVAILABLE -> 503;
            case AWAIT_TIMEOUT -> 408;
            case DATABASE_ERROR, UNKNOWN_ERROR_CODE -> 500;
            case TRANSACTION_CONFLICT -> 409;
            default -> switch (code.category()) {
                case INVALID_INPUT -> 400;
                case NOT_FOUND -> 404;
                case CONFLICT -> 409;
                case PERMISSION -> 403;
                case MIGRATION, STORAGE, ENVIRONMENT -> 503;
            };
        };
    }

    /** The error document of {@code e}. */
    public static ObjectNode document(SluiceException e) {
        ObjectNode inner = Json.object();
        inner.put("code", e.code().code());
        inner.put("name", e.code().name());
        inner.put("problem", e.problem());
        inner.put("retryable", e.retryable());
        inner.put("fix", e.fix());
        ObjectNode outer = Json.object();
        outer.set("error", inner);
        return outer;
    }

    /** Answers {@code ctx} with {@code e}. */
    public static void respond(Context ctx, SluiceException e) {
        int status = status(e.code());
        if (status >= 500) {
            log.warn("request failed: {} {} -> {} {}", ctx.method(), route(ctx), e.code().code(), e.code().name(), e);
        }
        if (e.code() == ErrorCode.TOO_MANY_REQUESTS) {
            ctx.header("Retry-After", "1");
        }
        ctx.status(status).contentType("application/json").result(Json.bytes(document(e)));
    }

    /** The route pattern the request matched ({@code /api/v1/streams/{name}}), or {@code unmatched}. */
    public static String route(Context ctx) {
        try {
            io.javalin.router.Endpoint e = ctx.endpoint();
            return e == null ? "unmatched" : e.path;
        } catch (RuntimeException e) {
            return "unmatched";
        }
    }

    /** Answers {@code ctx} for an exception that is not a SluiceException: logged, shown without its text. */
    public static void unexpected(Context ctx, Exception e) {
        log.error("unexpected server error: {} {}", ctx.method(), route(ctx), e);
        respond(ctx, new SluiceException(ErrorCode.DATABASE_ERROR, "the server failed to answer this request ("
                + e.getClass().getSimpleName() + "); see the server log"));
    }
}
