"""Study A's assets, by stage: corpora, prompts, judgments, aggregation, reports."""

from argassets.argument_quality.assets import aggregation, corpora, judgments, prompts, reports

ASSET_MODULES = [corpora, prompts, judgments, aggregation, reports]
