package dev.sluice.testing;

import java.sql.Connection;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;

/** Wraps a DataSource and counts connections handed out, to prove an operation made no round trip. */
public final class CountingDataSource extends ForwardingDataSource {
    private final AtomicInteger opened = new AtomicInteger();

    public CountingDataSource(DataSource delegate) {
        super(delegate);
    }

    public int opened() {
        return opened.get();
    }

    @Override
    protected Connection wrap(Connection connection) {
        opened.incrementAndGet();
        return connection;
    }
}
