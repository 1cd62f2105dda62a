package dev.sluice.examples.orders;

/** The example's messages and requests. */
public final class Orders {
    private Orders() {
    }

    /** {@code POST /orders}: who orders how many of what. */
    public record OrderRequest(String email, String item, int quantity) {
    }

    /** The {@code order-created} event, produced in the order's transaction. */
    public record OrderCreated(long orderId, String email, String item, int quantity) {
    }

    /** An {@code emails} job. */
    public record Email(long orderId, String to, String subject) {
    }

    /** An order as {@code GET /orders/{id}} shows it, with whether its email was sent. */
    public record OrderView(long id, String email, String item, int quantity, boolean emailSent) {
    }
}
