"""Study B's checks: the knowledge base, the predictions, the ensembles, the validation, the annotator
reports, the KB analysis and retrieval."""

from asset_checks.political import (
    annotators,
    ensembles,
    kb_analysis,
    knowledge_base,
    predictions,
    reliability,
    retrieval,
    validation,
)

CHECK_MODULES = [knowledge_base, predictions, ensembles, validation, annotators, reliability, kb_analysis, retrieval]
