package dev.sluice.embedded.test;

import java.io.PrintWriter;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The test kit's data source: it behaves like a non-pooling one — every {@link #getConnection()} gives a
 * connection of its own at once, there is no bound and no wait, and a closed connection carries nothing of
 * its session over — but it reuses the physical connection after resetting it, instead of opening a new
 * one (a TCP connect, a backend fork and a SCRAM exchange, about 13 ms each) for every statement of a test.
 *
 * <p>What happens when a handed-out connection is closed:
 * <ul>
 *   <li>statements the caller left open are closed; an open transaction is rolled back and auto-commit is
 *       turned back on;</li>
 *   <li>{@code DISCARD ALL} resets the session: session advisory locks (the library's presence locks),
 *       {@code LISTEN}s, every {@code SET} (and {@code SET ROLE}), prepared statements (pgjdbc notices the
 *       command and drops its statement cache), cursors, temporary tables and cached plans;</li>
 *   <li>the physical connection is closed instead of kept when that fails (a terminated backend, a broken
 *       socket), when the caller changed client-side settings that {@code DISCARD ALL} cannot reset
 *       ({@code setReadOnly}, {@code setTransactionIsolation}, {@code setNetworkTimeout}, {@code setSchema},
 *       {@code setCatalog}, {@code setHoldability}, {@code setTypeMap}, {@code setClientInfo}), when it
 *       {@linkplain Connection#unwrap unwrapped} the driver's connection (notifications buffered in the
 *       driver, driver settings such as the prepare threshold), or when {@value #MAX_IDLE} connections are
 *       idle already.</li>
 * </ul>
 * A connection taken from the idle ones is checked first ({@link Connection#isValid}, one empty round
 * trip), so a backend a test terminated while it was idle is never handed out.
 *
 * <p>Why not HikariCP: it resets only the JDBC-level settings on return (session advisory locks, LISTEN
 * and {@code SET} would leak from one test's connection into the next), and it bounds the connections and
 * makes callers wait, which a test that holds many connections at once must not meet. This class keeps
 * the semantics of {@code PGSimpleDataSource} and only skips the reconnect.
 */
final class KitPool implements DataSource {
    /** Physical connections kept idle at most; more are closed on return. */
    static final int MAX_IDLE = 16;
    /** The seconds an idle connection's check may take before it counts as dead. */
    private static final int VALID_TIMEOUT_SECONDS = 5;

    private static final Map<String, KitPool> POOLS = new ConcurrentHashMap<>();
    /** JDBC setters whose effect DISCARD ALL does not undo on the client side: such a connection is closed. */
    private static final Set<String> DIRTYING = Set.of("setReadOnly", "setTransactionIsolation", "setNetworkTimeout",
            "setSchema", "setCatalog", "setHoldability", "setTypeMap", "setClientInfo", "unwrap");

    private final PGSimpleDataSource target = new PGSimpleDataSource();
    private final Deque<Connection> idle = new ArrayDeque<>();
    private final AtomicLong opened = new AtomicLong();
    private final AtomicLong reused = new AtomicLong();

    private KitPool(String url) {
        target.setUrl(url);
    }

    /** The one pool of the JVM for {@code url}. */
    static KitPool forUrl(String url) {
        return POOLS.computeIfAbsent(url, KitPool::new);
    }

    /** Physical connections opened so far (for the kit's own tests). */
    long opened() {
        return opened.get();
    }

    /** Connections handed out again after a reset (for the kit's own tests). */
    long reused() {
        return reused.get();
    }

    /** Physical connections idle now (for the kit's own tests). */
    synchronized int idleCount() {
        return idle.size();
    }

    @Override
    public Connection getConnection() throws SQLException {
        Connection physical;
        while ((physical = pollIdle()) != null) {
            if (physical.isValid(VALID_TIMEOUT_SECONDS)) {
                reused.incrementAndGet();
                return handOut(physical);
            }
            closeQuietly(physical);
        }
        physical = target.getConnection();
        opened.incrementAndGet();
        return handOut(physical);
    }

    /** Another user's connection: not pooled (the kit's connections are all the URL's user). */
    @Override
    public Connection getConnection(String username, String password) throws SQLException {
        return target.getConnection(username, password);
    }

    private synchronized Connection pollIdle() {
        return idle.pollFirst();
    }

    private Connection handOut(Connection physical) {
        return (Connection) Proxy.newProxyInstance(KitPool.class.getClassLoader(), new Class<?>[] {Connection.class},
                new Handle(physical));
    }

    /** Resets a returned connection and keeps it idle, or closes it. */
    private void giveBack(Connection physical, List<Statement> statements, boolean dirty) {
        for (Statement s : statements) {
            closeQuietly(s);
        }
        if (dirty || !reset(physical)) {
            closeQuietly(physical);
            return;
        }
        synchronized (this) {
            if (idle.size() < MAX_IDLE) {
                idle.addFirst(physical); // the most recently used first: its backend is warm
                return;
            }
        }
        closeQuietly(physical);
    }

    private static boolean reset(Connection physical) {
        try {
            if (physical.isClosed()) {
                return false;
            }
            if (!physical.getAutoCommit()) {
                physical.rollback();
                physical.setAutoCommit(true);
            }
            try (Statement s = physical.createStatement()) {
                s.execute("DISCARD ALL");
            }
            physical.clearWarnings();
            return true;
        } catch (SQLException | RuntimeException e) {
            return false;
        }
    }

    private static boolean isClosedQuietly(Statement s) {
        try {
            return s.isClosed();
        } catch (SQLException e) {
            return true;
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception ignored) {
            // closing a broken connection or statement: nothing left to release
        }
    }

    /** One handed-out connection: forwards to the physical one until closed, then gives it back. */
    private final class Handle implements InvocationHandler {
        private final Connection physical;
        private final List<Statement> statements = new ArrayList<>();
        private boolean closed;
        private boolean dirty;

        Handle(Connection physical) {
            this.physical = physical;
        }

        @Override
        public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
            String name = method.getName();
            switch (name) {
                case "equals":
                    return proxy == args[0];
                case "hashCode":
                    return System.identityHashCode(proxy);
                case "toString":
                    return "KitPool.Connection[" + physical + (isClosed() ? ", closed" : "") + "]";
                case "isClosed":
                    return isClosed() || physical.isClosed();
                case "isValid":
                    if (isClosed()) {
                        return false;
                    }
                    break;
                case "close":
                    close();
                    return null;
                case "abort":
                    synchronized (this) {
                        if (closed) {
                            return null; // given back already: the physical connection is someone else's now
                        }
                        closed = true; // the physical connection goes with it: never given back
                    }
                    break;
                case "isWrapperFor":
                    return ((Class<?>) args[0]).isInstance(proxy) || physical.isWrapperFor((Class<?>) args[0]);
                case "unwrap":
                    if (((Class<?>) args[0]).isInstance(proxy)) {
                        return proxy;
                    }
                    break;
                default:
                    break;
            }
            synchronized (this) {
                if (closed && !name.equals("abort")) {
                    throw new SQLException("This connection has been closed.", "08003");
                }
                if (DIRTYING.contains(name)) {
                    dirty = true;
                }
            }
            Object result;
            try {
                result = method.invoke(physical, args);
            } catch (InvocationTargetException e) {
                throw e.getCause();
            }
            if (result instanceof Statement s) {
                synchronized (this) {
                    if (statements.size() >= 64) {
                        statements.removeIf(KitPool::isClosedQuietly); // a long-lived connection prepares many
                    }
                    statements.add(s);
                }
            }
            return result;
        }

        private synchronized boolean isClosed() {
            return closed;
        }

        private void close() {
            List<Statement> open;
            boolean wasDirty;
            synchronized (this) {
                if (closed) {
                    return;
                }
                closed = true;
                open = List.copyOf(statements);
                statements.clear();
                wasDirty = dirty;
            }
            giveBack(physical, open, wasDirty);
        }
    }

    @Override
    public PrintWriter getLogWriter() {
        return null;
    }

    @Override
    public void setLogWriter(PrintWriter out) {
        // no log writer: the driver logs through java.util.logging
    }

    @Override
    public void setLoginTimeout(int seconds) {
        target.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() {
        return target.getLoginTimeout();
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        throw new SQLFeatureNotSupportedException("no parent logger");
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        if (iface.isInstance(this)) {
            return iface.cast(this);
        }
        throw new SQLException("not a wrapper of " + iface.getName());
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) {
        return iface.isInstance(this);
    }
}
