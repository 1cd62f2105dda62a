package dev.sluice.testing;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import javax.sql.DataSource;

/**
 * Loses the reply of the next {@link #lostReplies} commits of the transactions it {@link #targets}: the commit is made
 * for real, then the connection is closed and a connection failure (SQLState 08006) thrown — as when a backend is
 * terminated between its commit and its reply. The write is in; the client cannot know.
 */
public final class LostCommitReplies extends ForwardingDataSource {
    /** How many more targeted commits lose their reply. */
    public final AtomicInteger lostReplies;
    /** How many replies were lost so far. */
    public final AtomicInteger lost = new AtomicInteger();
    private final Predicate<List<String>> targets;

    /** Targets every transaction. */
    public LostCommitReplies(DataSource delegate, int lostReplies) {
        this(delegate, lostReplies, statements -> true);
    }

    /** Targets the transactions whose prepared statements (in order) match {@code targets}. */
    public LostCommitReplies(DataSource delegate, int lostReplies, Predicate<List<String>> targets) {
        super(delegate);
        this.lostReplies = new AtomicInteger(lostReplies);
        this.targets = targets;
    }

    @Override
    protected Connection wrap(Connection physical) {
        List<String> statements = new ArrayList<>();
        return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, m, args) -> {
                    String name = m.getName();
                    if (name.equals("prepareStatement") && args != null && args[0] instanceof String sql) {
                        statements.add(sql);
                    }
                    if (name.equals("commit") && targets.test(statements) && lostReplies.getAndDecrement() > 0) {
                        physical.commit();
                        lost.incrementAndGet();
                        physical.close();
                        throw new SQLException("An I/O error occurred while sending to the backend (reply lost by the test)",
                                "08006");
                    }
                    if (name.equals("commit") || name.equals("rollback")) {
                        statements.clear();
                    }
                    try {
                        return m.invoke(physical, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }
}
