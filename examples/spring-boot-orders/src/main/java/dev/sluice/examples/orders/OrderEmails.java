package dev.sluice.examples.orders;

import dev.sluice.EnqueueOptions;
import dev.sluice.Queue;
import dev.sluice.Sluice;
import dev.sluice.examples.orders.Orders.Email;
import dev.sluice.examples.orders.Orders.OrderCreated;
import dev.sluice.spring.SluiceJob;
import dev.sluice.spring.SluiceListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/** The listener that turns an order into an email job, and the worker that sends it. */
@Component
public class OrderEmails {
    private static final Logger log = LoggerFactory.getLogger(OrderEmails.class);

    private final Queue<Email> emails;
    private final JdbcTemplate jdbc;

    /** Beans over the Sluice client and the JdbcTemplate. */
    public OrderEmails(Sluice sluice, JdbcTemplate jdbc) {
        this.emails = sluice.queue("emails", Email.class);
        this.jdbc = jdbc;
    }

    /**
     * Each new order gets one confirmation email. Delivery is at least once, so the job's unique key makes a
     * redelivered event enqueue nothing new.
     */
    @SluiceListener(stream = "order-created", group = "emails", maxAttempts = "10")
    public void onOrderCreated(OrderCreated order) {
        emails.enqueue(new Email(order.orderId(), order.email(), "Your order of " + order.quantity() + " " + order.item()),
                EnqueueOptions.builder().uniqueKey("order-email-" + order.orderId()).build());
    }

    /** "Sends" the email: records it (once per order, whatever the retries). */
    @SluiceJob(queue = "emails", concurrency = "${orders.email-concurrency:4}")
    public void send(Email email) {
        jdbc.update("INSERT INTO sent_emails (order_id, recipient, subject) VALUES (?, ?, ?) ON CONFLICT (order_id) DO NOTHING",
                email.orderId(), email.to(), email.subject());
        log.info("email sent for order {}", email.orderId());
    }
}
