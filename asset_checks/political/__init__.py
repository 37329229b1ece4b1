"""Study B's checks: the knowledge base, the predictions, the ensembles and the KB analysis."""

from asset_checks.political import ensembles, kb_analysis, knowledge_base, predictions

CHECK_MODULES = [knowledge_base, predictions, ensembles, kb_analysis]
