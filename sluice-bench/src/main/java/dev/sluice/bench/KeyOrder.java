package dev.sluice.bench;

import dev.sluice.Message;
import java.util.Arrays;

/**
 * What {@link E2ePartitions} checks of a keyed group's handler calls, across every consumer client of the
 * benchmark's JVM: per message the moment of its first delivery (a global ticket, taken as the handler starts),
 * its key, and how often a handler started while another handler of the same key was still running (in any
 * client).
 *
 * <p>{@link #orderViolations()}: per key, messages whose first delivery came before the first delivery of an
 * earlier-id message of the same key. Redeliveries (at-least-once) do not count; only first deliveries do.
 * Messages are keyed {@code k0 .. k<keys-1>} (see {@link #key}); a message with another key fails the run.
 */
final class KeyOrder implements E2eOurs.Deliveries {
    private final int keys;
    private long[] ticket = new long[1 << 16];
    private int[] keyOf = new int[1 << 16];
    private final int[] running;
    private long next;
    private long overlaps;
    private long maxId;
    private String foreign;

    KeyOrder(int keys) {
        if (keys < 1) {
            throw new IllegalArgumentException("keys must be at least 1 (got " + keys + ")");
        }
        this.keys = keys;
        this.running = new int[keys];
    }

    /** The message key of index {@code i}. */
    static String key(int i) {
        return "k" + i;
    }

    private int index(String key) {
        if (key != null && key.length() > 1 && key.charAt(0) == 'k') {
            try {
                int i = Integer.parseInt(key, 1, key.length(), 10);
                if (i >= 0 && i < keys) {
                    return i;
                }
            } catch (NumberFormatException e) {
                // reported below
            }
        }
        return -1;
    }

    @Override
    public void started(Message<byte[]> m) {
        int k = index(m.messageKey());
        synchronized (this) {
            if (k < 0) {
                if (foreign == null) {
                    foreign = "message " + m.id() + " has key " + m.messageKey();
                }
                return;
            }
            if (running[k]++ > 0) {
                overlaps++;
            }
            int id = Math.toIntExact(m.id());
            if (id >= ticket.length) {
                int n = Math.max(ticket.length * 2, id + 1);
                ticket = Arrays.copyOf(ticket, n);
                keyOf = Arrays.copyOf(keyOf, n);
            }
            if (ticket[id] == 0) {
                ticket[id] = ++next;
                keyOf[id] = k;
                maxId = Math.max(maxId, id);
            }
        }
    }

    @Override
    public void finished(Message<byte[]> m) {
        int k = index(m.messageKey());
        if (k >= 0) {
            synchronized (this) {
                running[k]--;
            }
        }
    }

    /** Handler starts while a handler of the same key was running (in any client of this JVM). */
    synchronized long keyOverlaps() {
        return overlaps;
    }

    /** A message that did not carry one of the benchmark's keys, or null. */
    synchronized String foreignKey() {
        return foreign;
    }

    /** Per key, messages first delivered before an earlier-id message of their key was first delivered. */
    synchronized long orderViolations() {
        long[] latest = new long[keys]; // per key, the latest first-delivery ticket of the lower ids seen so far
        long violations = 0;
        for (int id = 1; id <= maxId; id++) {
            long t = ticket[id];
            if (t == 0) {
                continue; // never delivered: counted as lost by the run
            }
            int k = keyOf[id];
            if (t < latest[k]) {
                violations++;
            } else {
                latest[k] = t;
            }
        }
        return violations;
    }
}
