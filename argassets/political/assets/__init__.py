"""Assets: Study B, political positions of arguments (prompts, predictions, stats, ensembles, validation,
annotators, KB analysis, retrieval, study design)."""

from argassets.political.assets import (
    annotators,
    ensembles,
    kb_analysis,
    knowledge_base,
    predictions,
    prompts,
    results_page,
    retrieval,
    study_design,
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
    study_design,
]
