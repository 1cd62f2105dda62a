package dev.sluice.examples.orders;

import dev.sluice.examples.orders.Orders.OrderRequest;
import dev.sluice.examples.orders.Orders.OrderView;
import java.net.URI;
import java.util.Map;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/** {@code POST /orders} and {@code GET /orders/{id}}. */
@RestController
@RequestMapping("/orders")
public class OrderController {
    private final OrderService orders;

    /** A controller over the order service. */
    public OrderController(OrderService orders) {
        this.orders = orders;
    }

    /** Places an order: 201 with its id, or 422 when it is rejected (nothing saved, no event). */
    @PostMapping
    public ResponseEntity<Map<String, Object>> place(@RequestBody OrderRequest request) {
        long id = orders.place(request);
        return ResponseEntity.created(URI.create("/orders/" + id)).body(Map.of("id", id));
    }

    /** The order and whether its email was sent, or 404. */
    @GetMapping("/{id}")
    public ResponseEntity<OrderView> get(@PathVariable("id") long id) {
        return ResponseEntity.of(orders.find(id));
    }

    /** A rejected order is the client's problem, told in a sentence of ours (never a database message). */
    @ExceptionHandler(OrderService.OrderRejected.class)
    public ResponseEntity<Map<String, Object>> rejected(OrderService.OrderRejected e) {
        return ResponseEntity.status(HttpStatus.UNPROCESSABLE_CONTENT).body(Map.of("error", e.getMessage()));
    }
}
