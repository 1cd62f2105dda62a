-- The example's own tables (Spring's SQL initialisation runs this at every start; the embedded database is kept in
-- ./.sluice-orders, so everything is IF NOT EXISTS). Sluice's tables live in their own schema, installed by the client.
CREATE TABLE IF NOT EXISTS orders (
    id       bigserial PRIMARY KEY,
    email    text    NOT NULL,
    item     text    NOT NULL,
    quantity integer NOT NULL CHECK (quantity > 0)
);
CREATE TABLE IF NOT EXISTS stock (
    item      text PRIMARY KEY,
    available integer NOT NULL CHECK (available >= 0)
);
INSERT INTO stock (item, available) VALUES ('widget', 1000), ('gadget', 100), ('gizmo', 10) ON CONFLICT (item) DO NOTHING;
CREATE TABLE IF NOT EXISTS sent_emails (
    order_id  bigint PRIMARY KEY,
    recipient text NOT NULL,
    subject   text NOT NULL,
    sent_at   timestamptz NOT NULL DEFAULT now()
);
