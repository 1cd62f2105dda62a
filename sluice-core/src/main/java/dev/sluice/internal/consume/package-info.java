/**
 * Stream consumption: consumer groups (registration, listing, rewind, dead letters), the snapshot fence
 * ({@code SnapshotFence}: the head below which every id is resolved; {@code docs/fence.md} has the proof), the fenced
 * range claim with its append-only cursor, leases and their renewal, key policies ({@code parallel},
 * {@code exclusive}, {@code ordered}), the exception queue (retries, delays, dead letters) and fenced reads
 * ({@code LogReader}). {@code docs/consume.md} describes the delivery path step by step.
 */
package dev.sluice.internal.consume;
