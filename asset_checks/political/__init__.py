"""Study B's checks: the knowledge base and the predictions."""

from asset_checks.political import knowledge_base, predictions

CHECK_MODULES = [knowledge_base, predictions]
