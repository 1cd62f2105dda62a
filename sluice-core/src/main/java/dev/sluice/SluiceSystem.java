package dev.sluice;

import java.util.Optional;

/** The control plane of a schema: {@code sluice.system()}. A handle: creating it does no I/O. */
public final class SluiceSystem {
    private final Sluice sluice;

    SluiceSystem(Sluice sluice) {
        this.sluice = sluice;
    }

    /**
     * Installs the control plane if missing, or migrates it when it is older and the client allows
     * migration. Idempotent and safe to call concurrently from many processes (one schema-scoped
     * advisory lock serializes them; exactly one set of tables is created).
     */
    public SystemInfo register() {
        return sluice.engine().systemCatalog().register(sluice.migrate());
    }

    /** The installed control plane, or empty when the schema has none. */
    public Optional<SystemInfo> get() {
        return sluice.engine().systemCatalog().get();
    }
}
