-- Weekly inventory snapshots per product (on hand, reserved), backfilled for October 2026.
CREATE TABLE inventory_snapshots (
    id INTEGER PRIMARY KEY,
    product_id INTEGER NOT NULL REFERENCES products (id),
    snapshot_date TEXT NOT NULL,
    on_hand INTEGER NOT NULL,
    reserved INTEGER NOT NULL
);

INSERT INTO inventory_snapshots (product_id, snapshot_date, on_hand, reserved)
SELECT
    p.id,
    d.snapshot_date,
    (p.id * 37 + d.n * 11) % 400 + 20,
    (p.id * 13 + d.n * 7) % 25
FROM products AS p
CROSS JOIN (
    SELECT 1 AS n, '2026-10-05' AS snapshot_date
    UNION ALL SELECT 2, '2026-10-12'
    UNION ALL SELECT 3, '2026-10-19'
    UNION ALL SELECT 4, '2026-10-26'
) AS d
ORDER BY d.snapshot_date, p.id;

CREATE INDEX ix_inventory_snapshots_product_date
    ON inventory_snapshots (product_id, snapshot_date);
