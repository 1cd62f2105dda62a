package dev.sluice.internal.jdbc;

import java.sql.Connection;
import java.sql.SQLException;

/** A unit of JDBC work on a connection the caller manages. */
@FunctionalInterface
public interface SqlWork<T> {
    T run(Connection connection) throws SQLException;
}
