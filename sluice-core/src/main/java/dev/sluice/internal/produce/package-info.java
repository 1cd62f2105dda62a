/**
 * The produce path: validation and encoding before any round trip, the commit-driven batcher, and the statements that
 * write the log, idempotency keys and compaction heads ({@code ProduceSql}); {@code docs/produce.md} describes it.
 */
package dev.sluice.internal.produce;
