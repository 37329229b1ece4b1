"""Asset checks: knowledge_base."""
