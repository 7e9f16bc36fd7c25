"""`Idempotency-Key` on every write route: a write sent again by the same user with the same key
within 24 hours is done once and answered as the first time (CONTRACT.md, "Failover through the
gateway"; docs/api.md, "Idempotency")."""
