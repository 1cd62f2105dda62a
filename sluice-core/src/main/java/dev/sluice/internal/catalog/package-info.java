/**
 * The control plane's catalogues: the installation ({@code system_config}), streams ({@code stream_config} and its
 * log), the migration administration behind {@code sluice migrate}, and name validation. Each control-plane table has
 * one writer; stream registration creates the stream's family of tables (see {@code internal.schema}).
 */
package dev.sluice.internal.catalog;
