"""Study B's checks: the knowledge base, the predictions and the ensembles."""

from asset_checks.political import ensembles, knowledge_base, predictions

CHECK_MODULES = [knowledge_base, predictions, ensembles]
