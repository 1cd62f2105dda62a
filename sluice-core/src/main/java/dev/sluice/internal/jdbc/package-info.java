/**
 * Database plumbing shared by every engine: {@code Db} (connections and the transaction runner that replays a unit
 * of work on serialization failures, deadlocks and lost connections), {@code Sql} (parameter binding and row mapping),
 * database URLs, SQL error classification, identifier rules and the cleaner of error text before it is stored.
 */
package dev.sluice.internal.jdbc;
