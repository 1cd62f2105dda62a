/**
 * Tracing (docs/tracing.md): the W3C trace context written into message and job headers when they are produced, and
 * the {@code CONSUMER} span each delivery and job attempt runs its handler in. {@code Tracing} and the interfaces the
 * engines hold name no OpenTelemetry type, so a client built without {@code Sluice.builder().openTelemetry(...)} never
 * loads an OpenTelemetry class ({@code NoTracing}: every call a no-op); {@code OtelTracing} is the only class that
 * touches OpenTelemetry, built only when one was given.
 */
package dev.sluice.internal.tracing;
