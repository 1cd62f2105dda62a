/**
 * The JUnit 5 extension for tests against a real PostgreSQL: {@code @SluiceTest} starts one embedded server per test
 * JVM (or uses {@code SLUICE_TEST_DATABASE_URL}) and gives each test class a fresh schema.
 */
package dev.sluice.embedded.test;
