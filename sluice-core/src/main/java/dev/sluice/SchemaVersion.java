package dev.sluice;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The schema version of a payload type, stored on every message (default 1 when absent). A consumer
 * group claims only the versions it accepts; bump it when the payload's shape changes incompatibly.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface SchemaVersion {
    /** The version, at least 1. */
    int value();
}
