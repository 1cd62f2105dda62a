package dev.sluice;

import java.util.List;

/**
 * One page of a keyset-paginated listing.
 *
 * @param items the items, in order
 * @param next  the cursor for the next page, or {@code null} when this is the last
 */
public record Page<T>(List<T> items, String next) {
}
