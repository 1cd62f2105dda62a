package dev.sluice;

import java.util.Locale;

/** Placeholder until the tokens branch lands (replaced by its version on merge). */
public enum TokenRole {
    READ, WRITE, ADMIN;

    public boolean allows(TokenRole needed) {
        return compareTo(needed) >= 0;
    }

    public String text() {
        return name().toLowerCase(Locale.ROOT);
    }
}
