/**
 * What runs in the background, per client: {@code ClientRuntime} (one scheduler and one handler executor, sized by
 * configuration and never by the number of groups or queues), {@code PollLoop} (the poll/park loop of consumers and
 * workers as scheduled tasks) and {@code Tracker} (one lifecycle for every running part).
 */
package dev.sluice.internal.runtime;
