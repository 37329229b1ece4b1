"""Study A's assets, by stage: corpora, prompts, judgments, aggregation, reports (length bias among them), study design."""

from argassets.argument_quality.assets import (
    aggregation,
    corpora,
    judgments,
    length_bias,
    prompts,
    reports,
    results_page,
    study_design,
)

ASSET_MODULES = [corpora, prompts, judgments, aggregation, reports, length_bias, results_page, study_design]
