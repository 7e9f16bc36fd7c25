-- Index orders by order_date for the monthly revenue charts.
CREATE INDEX ix_orders_order_date ON orders (order_date);
