/**
 * The embedded PostgreSQL 17 server Sluice starts when no database URL is given: binaries from Maven Central, a data
 * directory only its user can read, a random superuser password, loopback only, durable settings, and recovery of a
 * server left running by a killed process.
 */
package dev.sluice.embedded;
