package dev.sluice.spring;

import dev.sluice.AmbientTransaction;
import java.sql.Connection;
import java.util.Objects;
import javax.sql.DataSource;
import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The transactional outbox for Spring: inside a Spring-managed transaction ({@code @Transactional},
 * {@code TransactionTemplate}) on the client's DataSource, {@code produce} and {@code enqueue} write on that
 * transaction's connection, so the message or job commits or rolls back with the business writes.
 *
 * <p>The connection is the one {@code DataSourceUtils.getConnection(DataSource)} binds for the DataSource, which
 * {@code DataSourceTransactionManager}, {@code JdbcTransactionManager} and {@code JpaTransactionManager} all do. The
 * key is the raw DataSource: a {@link TransactionAwareDataSourceProxy} is unwrapped, because the managers bind the
 * target, not the proxy. Outside a transaction {@link #current()} answers {@code null} (and allocates nothing):
 * Sluice then runs its own transaction, as without the starter. So does a transaction that holds no connection of
 * this DataSource (another DataSource's manager, JTA): it is not one Sluice's writes could be atomic with.
 */
public final class SpringAmbientTransaction implements AmbientTransaction {
    private final DataSource dataSource;

    /** An ambient transaction over {@code dataSource} (a transaction-aware proxy is unwrapped). */
    public SpringAmbientTransaction(DataSource dataSource) {
        this.dataSource = unwrap(Objects.requireNonNull(dataSource, "dataSource"));
    }

    /** The DataSource transactions are looked up by (the target of a {@link TransactionAwareDataSourceProxy}). */
    public DataSource dataSource() {
        return dataSource;
    }

    /** {@code ds} without its {@link TransactionAwareDataSourceProxy} layers, whose connections are not the bound key. */
    static DataSource unwrap(DataSource ds) {
        DataSource d = ds;
        while (d instanceof TransactionAwareDataSourceProxy proxy && proxy.getTargetDataSource() != null) {
            d = proxy.getTargetDataSource();
        }
        return d;
    }

    /** The current Spring transaction's connection of this DataSource, or {@code null} outside one. */
    @Override
    public Joined current() {
        // A read-only or synchronisation-only scope (PROPAGATION_SUPPORTS without a transaction) is not one:
        // writing there would auto-commit, so Sluice's own transaction is the honest answer.
        if (!TransactionSynchronizationManager.isActualTransactionActive()) {
            return null;
        }
        // Only a transaction that holds a connection of this DataSource is ours to join. A transaction of another
        // DataSource's manager (or JTA) binds none: DataSourceUtils would bind a fresh auto-commit connection, and
        // writing there would neither be atomic with the caller's work nor roll back with it.
        if (!(TransactionSynchronizationManager.getResource(dataSource) instanceof ConnectionHolder holder)) {
            return null;
        }
        // The transaction's own connection, as DataSourceUtils.getConnection would hand it, without counting a
        // request on the holder that nobody would release: the manager releases it when the transaction completes,
        // and Sluice neither commits nor closes it.
        Connection c = holder.getConnection();
        return AmbientTransaction.joined(c, SpringAmbientTransaction::afterCommit);
    }

    private static void afterCommit(Runnable action) {
        if (!TransactionSynchronizationManager.isSynchronizationActive()) {
            // A manager without synchronisation: other processes are still woken by the commit's notification.
            return;
        }
        TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
            @Override
            public void afterCommit() {
                action.run();
            }
        });
    }
}
