"""Study A's assets, by stage: corpora, prompts, judgments, aggregation, reports (length bias among them)."""

from argassets.argument_quality.assets import (
    aggregation,
    corpora,
    judgments,
    length_bias,
    prompts,
    reliability,
    reports,
    results_page,
)

ASSET_MODULES = [corpora, prompts, judgments, aggregation, reports, length_bias, reliability, results_page]
