/**
 * Meters (docs/metrics.md): what producers, consumptions and queue workers count and time, and the gauges of lag,
 * backlog, dead letters and queue depths. {@code Meters} and the interfaces the engines hold name no Micrometer
 * type, so a client built without {@code Sluice.builder().meterRegistry(...)} never loads a Micrometer class
 * ({@code NoMeters}); {@code MicrometerMeters} and {@code MicrometerGauges} are the only classes that touch
 * Micrometer, built only when a registry was given. The gauges read figures refreshed by {@code MeterRefresh}: one
 * statement per interval for every group and queue, on the client's shared scheduler.
 */
package dev.sluice.internal.metrics;
