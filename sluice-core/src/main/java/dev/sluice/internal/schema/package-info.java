/**
 * The schema: migration steps (control plane and per-stream families, append-only), the version gates and the runner
 * that applies steps under the schema's advisory lock, and the physical names of a stream's family of tables
 * ({@code FamilyTables}). {@code docs/migrations.md} lists the steps.
 */
package dev.sluice.internal.schema;
