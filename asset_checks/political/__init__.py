"""Study B's checks: the knowledge base, the predictions, the ensembles and retrieval."""

from asset_checks.political import ensembles, knowledge_base, predictions, retrieval

CHECK_MODULES = [knowledge_base, predictions, ensembles, retrieval]
