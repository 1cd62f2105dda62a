/**
 * API tokens: {@code TokenStore} makes the secrets (never stored: only their SHA-256 hashes) and is the one writer of
 * {@code api_token}, through the statements of {@code TokenSql}. {@code docs/security.md} ("API tokens") describes
 * them.
 */
package dev.sluice.internal.token;
