package dev.sluice.embedded.test;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;

/**
 * The database a {@link SluiceTest} class runs against: a JDBC URL, a data source and the fresh
 * schema reserved for this test class.
 *
 * @param jdbcUrl    JDBC URL of the server (embedded, or {@code SLUICE_TEST_DATABASE_URL}); it carries the
 *                   password, so {@link #toString()} leaves it out
 * @param schema     the schema reserved for this test class (created empty, dropped afterwards)
 * @param external   whether the server is external (from {@code SLUICE_TEST_DATABASE_URL})
 */
public record TestDatabase(String jdbcUrl, String schema, boolean external) {

    /**
     * The data source for the server: it hands out a connection of its own on every call, without bound
     * or wait, like a non-pooling one, but reuses physical connections once they are reset — a closed
     * connection carries nothing of its session (advisory locks, {@code LISTEN}, {@code SET}, prepared
     * statements, an open transaction) into the next one. Every call returns the JVM's one pool for this
     * server; see {@code docs/testing.md}.
     */
    public DataSource dataSource() {
        return KitPool.forUrl(jdbcUrl);
    }

    /** Opens a connection (auto-commit on); the caller closes it. */
    public Connection connect() throws SQLException {
        return dataSource().getConnection();
    }

    /** Runs one SQL statement with auto-commit, for test set-up and sabotage. */
    public void execute(String sql) {
        try (Connection c = connect(); Statement s = c.createStatement()) {
            s.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException("test SQL failed: " + sql, e);
        }
    }

    /** Names the schema only: the URL carries a password. */
    @Override
    public String toString() {
        return "TestDatabase[schema=" + schema + ", external=" + external + "]";
    }

    /** A further fresh schema name, unique on the server, that is dropped with this test class. */
    public String freshSchemaName(String hint) {
        return SluiceTestExtension.reserveExtraSchema(this, hint);
    }
}
