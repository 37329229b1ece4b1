"""Assets: prompts."""
