/**
 * Maintenance of stream logs: partitions of {@code message_log_<id>} are created ahead of the head, so producers
 * never need DDL rights and never fail for lack of a partition.
 */
package dev.sluice.internal.maint;
