package dev.sluice.server.routes;

import dev.sluice.ErrorCode;
import dev.sluice.Producer;
import dev.sluice.ProducerConfig;
import dev.sluice.Sluice;
import dev.sluice.SluiceException;
import dev.sluice.internal.schedule.ScheduleStore;
import dev.sluice.internal.text.Echo;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The server's producers, one per (stream, content type) in use, so concurrent requests share one batcher
 * (their messages go out in the same round trips). Bounded: past {@link #MAX} the least recently used one is
 * closed (it drains what it buffered first).
 */
final class ProducerCache implements AutoCloseable {
    static final int MAX = 64;
    private final Sluice sluice;
    private final Map<String, Producer<byte[]>> producers = new LinkedHashMap<>(16, 0.75f, true);
    private boolean closed;

    ProducerCache(Sluice sluice) {
        this.sluice = sluice;
    }

    /** The producer for {@code stream} storing {@code contentType} with every message. */
    Producer<byte[]> get(String stream, String contentType) {
        String ct = contentType(contentType);
        String key = stream + '\u0000' + ct;
        Producer<byte[]> evicted = null;
        Producer<byte[]> p;
        synchronized (producers) {
            if (closed) {
                throw new SluiceException(ErrorCode.CLIENT_CLOSED, "the server is shutting down");
            }
            p = producers.get(key);
            if (p == null) {
                p = sluice.stream(stream, byte[].class).producer(ProducerConfig.defaults().withSerde(ScheduleStore.bytesAs(ct)));
                producers.put(key, p);
                if (producers.size() > MAX) {
                    String eldest = producers.keySet().iterator().next();
                    evicted = producers.remove(eldest);
                }
            }
        }
        if (evicted != null) {
            evicted.close();
        }
        return p;
    }

    /** A content type as stored: 1 to 255 characters without control characters; absent → octet-stream. */
    static String contentType(String ct) {
        if (ct == null || ct.isBlank()) {
            return "application/octet-stream";
        }
        String t = ct.trim();
        if (t.length() > 255 || Echo.firstControl(t) >= 0) {
            throw new SluiceException(ErrorCode.MALFORMED_REQUEST, "a content type is 1 to 255 characters without control"
                    + " characters");
        }
        return t;
    }

    @Override
    public void close() {
        Map<String, Producer<byte[]>> all;
        synchronized (producers) {
            closed = true;
            all = new LinkedHashMap<>(producers);
            producers.clear();
        }
        all.values().forEach(Producer::close);
    }
}
