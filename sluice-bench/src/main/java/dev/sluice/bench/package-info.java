/**
 * The benchmarks behind {@code sluice bench}: each reports Sluice's figure beside a reference measured in the same
 * run, as JSON lines ({@code docs/benchmarks.md} gives the commands, the fields and the latest figures).
 */
package dev.sluice.bench;
