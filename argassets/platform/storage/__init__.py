"""Storage: the judgment cache, table storage and the read-only warehouse."""
