"""Assets: political."""
