"""Assets: knowledge_base."""
