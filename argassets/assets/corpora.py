"""Assets: corpora."""
