/**
 * How refused input is echoed in error messages: cut short, control characters made visible, never a secret.
 */
package dev.sluice.internal.text;
