"""Assets: Study B, political positions of arguments (prompts, predictions, stats, ensembles, validation, annotators, KB analysis, retrieval)."""

from argassets.political.assets import (
    annotators,
    ensembles,
    kb_analysis,
    knowledge_base,
    predictions,
    prompts,
    results_page,
    retrieval,
    validation,
)

ASSET_MODULES = [
    knowledge_base,
    prompts,
    predictions,
    ensembles,
    validation,
    annotators,
    results_page,
    kb_analysis,
    retrieval,
]
