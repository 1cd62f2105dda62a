package dev.sluice.examples.orders;

import dev.sluice.ProduceOptions;
import dev.sluice.Producer;
import dev.sluice.Sluice;
import dev.sluice.examples.orders.Orders.OrderCreated;
import dev.sluice.examples.orders.Orders.OrderRequest;
import dev.sluice.examples.orders.Orders.OrderView;
import java.util.Optional;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * Places orders: the order row, the stock reservation and the {@code order-created} event in one transaction, so an
 * order that cannot be placed leaves no event behind (the starter's transactional outbox).
 */
@Service
public class OrderService {
    /** The order is not valid, or the stock does not cover it: the transaction rolled back. */
    public static class OrderRejected extends RuntimeException {
        private static final long serialVersionUID = 1L;

        OrderRejected(String reason) {
            super(reason);
        }
    }

    private final JdbcTemplate jdbc;
    private final Producer<OrderCreated> events;

    /** A service over the application's JdbcTemplate and the Sluice client. */
    public OrderService(JdbcTemplate jdbc, Sluice sluice) {
        this.jdbc = jdbc;
        this.events = sluice.stream("order-created", OrderCreated.class).producer();
    }

    /**
     * Saves the order, produces its event, then reserves the stock; a rejection after the event was produced rolls
     * the event back with the order.
     */
    @Transactional
    public long place(OrderRequest r) {
        if (r == null || r.email() == null || !r.email().contains("@") || r.item() == null || r.item().isBlank()
                || r.quantity() < 1 || r.quantity() > 1000) {
            throw new OrderRejected("an order needs an email address, an item and a quantity of 1 to 1000");
        }
        Long id = jdbc.queryForObject("INSERT INTO orders (email, item, quantity) VALUES (?, ?, ?) RETURNING id", Long.class,
                r.email(), r.item(), r.quantity());
        events.produce(new OrderCreated(id, r.email(), r.item(), r.quantity()), ProduceOptions.key("order-" + id));
        int reserved = jdbc.update("UPDATE stock SET available = available - ? WHERE item = ? AND available >= ?",
                r.quantity(), r.item(), r.quantity());
        if (reserved == 0) {
            throw new OrderRejected("not enough stock of that item");
        }
        return id;
    }

    /** The order and whether its email went out, or empty. */
    public Optional<OrderView> find(long id) {
        return jdbc.query("SELECT o.id, o.email, o.item, o.quantity, EXISTS (SELECT 1 FROM sent_emails e WHERE e.order_id = o.id)"
                        + " AS sent FROM orders o WHERE o.id = ?",
                (rs, n) -> new OrderView(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getInt(4), rs.getBoolean(5)), id)
                .stream().findFirst();
    }
}
