/**
 * Job queues: enqueue (unique keys, delays, priorities), the skip-scan claim with {@code SKIP LOCKED}, heartbeats,
 * batched acks, retries with backoff, dead jobs and their retention, listings. Every statement on {@code job} and
 * {@code job_dead} is in {@code QueueSql}; {@code docs/queues.md} describes the semantics.
 */
package dev.sluice.internal.queue;
