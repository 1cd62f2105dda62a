package dev.sluice.internal.consume;

import dev.sluice.BindingPattern;
import java.util.List;

/**
 * A group's binding history: each pattern applies to messages with ids in [from, until). A message
 * is for the group when no pattern applies at its id (the group had no bindings then), or when its
 * routing key matches one that applies.
 */
final class Bindings {
    record Entry(String pattern, long from, Long until) {
        boolean appliesTo(long id) {
            return id >= from && (until == null || id < until);
        }
    }

    private final List<Entry> entries;

    Bindings(List<Entry> entries) {
        this.entries = List.copyOf(entries);
    }

    static Entry entry(String pattern, long from, Long until) {
        return new Entry(BindingPattern.validate(pattern), from, until);
    }

    boolean accepts(long id, String routingKey) {
        boolean any = false;
        for (Entry e : entries) {
            if (e.appliesTo(id)) {
                any = true;
                if (routingKey != null && BindingPattern.globMatches(e.pattern(), routingKey)) {
                    return true;
                }
            }
        }
        return !any;
    }
}
