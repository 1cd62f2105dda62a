package dev.sluice.bench.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.sluice.bench.SharedServer;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * A worker process's pool started while its server terminates connections (the lab's terminations; a failover):
 * when the first connection dies as HikariCP reads its transaction isolation, HikariCP keeps -1 and every later
 * connection fails to set it (HikariCP issue #1944), so the pool never hands out a connection and the process gave
 * up (SLU-0300 after the connection timeout). The worker's pool names its isolation, so it lives on.
 */
class WorkerPoolTest {

    /** Connections of the shared server; the first one's isolation read fails as a terminated backend's would. */
    private static DataSource firstIsolationReadFails() {
        AtomicBoolean failed = new AtomicBoolean();
        org.postgresql.ds.PGSimpleDataSource ds = new org.postgresql.ds.PGSimpleDataSource() {
            @Override
            public Connection getConnection() throws SQLException {
                Connection c = super.getConnection();
                return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                        (proxy, m, args) -> {
                            if (m.getName().equals("getTransactionIsolation") && failed.compareAndSet(false, true)) {
                                throw new SQLException("An I/O error occurred while sending to the backend", "08006");
                            }
                            try {
                                return m.invoke(c, args);
                            } catch (InvocationTargetException e) {
                                throw e.getCause();
                            }
                        });
            }
        };
        ds.setURL(SharedServer.get().jdbcUrl());
        return ds;
    }

    private static HikariConfig workerPool(DataSource ds) {
        HikariConfig hc = LabWorker.poolConfig("jdbc:postgresql://unused/", "pool-test");
        hc.setDataSource(ds);
        hc.setConnectionTimeout(3_000);
        return hc;
    }

    private static int select1(HikariDataSource pool) throws SQLException {
        try (Connection c = pool.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT 1")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    @Test
    void aWorkerPoolWhoseFirstConnectionDiesDuringSetupStillHandsOutConnections() throws Exception {
        try (HikariDataSource pool = new HikariDataSource(workerPool(firstIsolationReadFails()))) {
            for (int i = 0; i < 5; i++) {
                assertThat(select1(pool)).isEqualTo(1);
            }
            try (Connection c = pool.getConnection()) {
                assertThat(c.getTransactionIsolation()).isEqualTo(Connection.TRANSACTION_READ_COMMITTED);
            }
        }
    }

    @Test
    void theSamePoolLeftToDetectItsIsolationNeverHandsOutOne() {
        // The control: HikariCP's own behaviour, which the named isolation avoids.
        HikariConfig detecting = workerPool(firstIsolationReadFails());
        detecting.setTransactionIsolation(null);
        try (HikariDataSource pool = new HikariDataSource(detecting)) {
            assertThatThrownBy(() -> select1(pool)).isInstanceOf(SQLException.class);
        }
    }
}
