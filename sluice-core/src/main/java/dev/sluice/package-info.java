/**
 * The public API of Sluice: PostgreSQL-native streams, queues, schedules and locks.
 *
 * <p>{@link dev.sluice.Sluice} is the client (build it from a {@code DataSource}); from it come streams
 * ({@link dev.sluice.Stream}: producers, consumer groups, fenced readers), queues ({@link dev.sluice.Queue}: enqueue,
 * workers, dead jobs), schedules ({@link dev.sluice.Schedule}) and TTL locks and leaderships. Every failure is a
 * {@link dev.sluice.SluiceException} with an {@link dev.sluice.ErrorCode} (catalogue: {@code docs/errors.md}).
 * Handles here validate their input and delegate to the engines in {@code dev.sluice.internal.*}; nothing in
 * {@code internal} is API.
 */
package dev.sluice;
