package dev.sluice.spring;

import dev.sluice.Sluice;

/**
 * Adjusts the {@link Sluice.Builder} of the auto-configured client after the {@code sluice.*} properties are applied
 * and before it is built: the one place to wire what the properties do not name (tracing, a custom clock of
 * maintenance, thread counts chosen in code). Every bean of this type is applied, in {@code @Order}/{@code Ordered}
 * order; later ones see (and may override) what earlier ones set.
 */
@FunctionalInterface
public interface SluiceBuilderCustomizer {
    /** Adjusts {@code builder} in place. */
    void customize(Sluice.Builder builder);
}
