"""argassets: a Dagster code location for LLM-as-judge research on arguments."""
