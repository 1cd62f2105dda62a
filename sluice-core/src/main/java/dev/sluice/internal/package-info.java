/**
 * The composition root: {@code Engine} owns what one client is made of — the {@code Db}, the catalogs and
 * stores (each the one writer of its tables), the session connection, the shared runtime, the tracking of
 * running parts and the routing of local wake-ups. The public handles of {@code dev.sluice} validate input
 * and delegate here; the sub-packages hold the engines.
 */
package dev.sluice.internal;
