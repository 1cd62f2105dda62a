package dev.sluice.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

/** A small HTTP client for the server tests: JSON in, status and JSON out, an optional bearer token. */
final class Http {
    static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /** One answer. */
    record Reply(int status, String body, HttpResponse<byte[]> raw) {
        JsonNode json() {
            try {
                return JSON.readTree(body);
            } catch (IOException e) {
                throw new AssertionError("not JSON (" + status + "): " + body, e);
            }
        }

        /** The error code of an error answer. */
        String code() {
            return json().path("error").path("code").asText();
        }
    }

    private final String base;
    private final String token;

    Http(String base, String token) {
        this.base = base.endsWith("/") ? base.substring(0, base.length() - 1) : base;
        this.token = token;
    }

    Http withToken(String t) {
        return new Http(base, t);
    }

    Reply get(String path) {
        return send(request(path).GET());
    }

    Reply delete(String path) {
        return send(request(path).DELETE());
    }

    Reply post(String path, Object json) {
        return send(request(path).header("Content-Type", "application/json").POST(body(json)));
    }

    Reply put(String path, Object json) {
        return send(request(path).header("Content-Type", "application/json").PUT(body(json)));
    }

    /** A POST of raw bytes with the given headers (e.g. Content-Type, Idempotency-Key). */
    Reply postBytes(String path, byte[] bytes, Map<String, String> headers) {
        HttpRequest.Builder b = request(path).POST(HttpRequest.BodyPublishers.ofByteArray(bytes));
        headers.forEach(b::header);
        return send(b);
    }

    private HttpRequest.Builder request(String path) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(60));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return b;
    }

    private static HttpRequest.BodyPublisher body(Object json) {
        try {
            return HttpRequest.BodyPublishers.ofByteArray(json instanceof String s ? s.getBytes(StandardCharsets.UTF_8)
                    : JSON.writeValueAsBytes(json));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static Reply send(HttpRequest.Builder b) {
        try {
            HttpResponse<byte[]> r = CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
            return new Reply(r.statusCode(), new String(r.body(), StandardCharsets.UTF_8), r);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
