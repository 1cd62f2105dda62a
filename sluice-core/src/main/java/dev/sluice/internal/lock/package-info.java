/**
 * TTL locks with fencing tokens ({@code lock} table, written only by {@code LockSql}'s statements) and leader
 * election on top of them. {@code docs/locks.md} states the guarantees.
 */
package dev.sluice.internal.lock;
