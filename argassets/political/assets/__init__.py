"""Assets: Study B, political positions of arguments (prompts, stats, ensembles, validation, annotators, KB analysis,
retrieval, study design).

The predictions (``political_predictions``) are built by the platform from the study's declaration (``study.py``).
"""

from argassets.political.assets import (
    annotators,
    ensembles,
    kb_analysis,
    knowledge_base,
    prompts,
    reliability,
    results_page,
    retrieval,
    study_design,
    validation,
)

ASSET_MODULES = [
    knowledge_base,
    prompts,
    ensembles,
    validation,
    annotators,
    reliability,
    results_page,
    kb_analysis,
    retrieval,
    study_design,
]
