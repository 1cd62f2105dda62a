/**
 * The reliability lab ({@code sluice lab}): producer and consumer processes under injected faults (kills, backend
 * terminations, a server restart, long transactions), every attempt in a ledger, and a checker that classifies every
 * message in SQL; the verdict fails on any lost or unexpected message ({@code docs/reliability-lab.md}).
 */
package dev.sluice.bench.lab;
