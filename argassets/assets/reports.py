"""Assets: reports."""
