"""Assets: aggregation."""
