"""Pure decisions: rolling order, replica placement, scale-down drains, failover, status."""
