/**
 * Wake-ups: one LISTEN connection per client ({@code ClientSession}) on the schema's channel, fanning stream and
 * queue notifications out to the consumers and workers that wait for them, and holding the advisory locks that show a
 * group's consumers are alive. Notifications only wake; correctness never depends on receiving one.
 */
package dev.sluice.internal.notify;
