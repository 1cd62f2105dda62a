package dev.sluice.examples.orders;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * The orders example: {@code POST /orders} saves an order and produces its {@code order-created} event in one
 * transaction ({@link OrderService}); {@link OrderEmails} consumes the event and enqueues an email job, which a worker
 * of the same class "sends" (records). With no {@code spring.datasource.url} it runs on an embedded PostgreSQL in
 * {@code ./.sluice-orders}.
 */
@SpringBootApplication
public class OrdersApplication {
    /** Starts the application. */
    public static void main(String[] args) {
        SpringApplication.run(OrdersApplication.class, args);
    }
}
