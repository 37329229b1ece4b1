"""Assets: judgments."""
