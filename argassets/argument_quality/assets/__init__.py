"""Study A's assets, by stage: corpora, prompts, aggregation, reports (length bias among them), study design.

The judgments (``aq_judgments``) are built by the platform from the study's declaration (``study.py``).
"""

from argassets.argument_quality.assets import (
    aggregation,
    corpora,
    length_bias,
    prompt_axis,
    prompts,
    reliability,
    reports,
    results_page,
    study_design,
)

ASSET_MODULES = [
    corpora,
    prompts,
    aggregation,
    reports,
    length_bias,
    reliability,
    prompt_axis,
    results_page,
    study_design,
]
