"""Study A declared: argument quality on Webis-ArgQuality-20, pairwise verdicts (A, B or Tie)."""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType
from typing import Any

import dagster as dg
import pandas as pd

from argassets.argument_quality.exports import EXPORT
from argassets.argument_quality.judgments import (
    AQ_DEFAULT_SAMPLING,
    JUDGING_INPUTS,
    N_RUNS,
    adaptive_pairs,
    judging_requests,
    judgment_table,
    label_summary_markdown,
)
from argassets.argument_quality.resources import WebisSourceResource
from argassets.argument_quality.scope import DIMENSIONS, STRATEGIES, STUDY_NAME, ArgumentQualityScope
from argassets.platform.study import ImportKeys, RequestSet, StudyDefinition


def judging_metadata(table: pd.DataFrame, asked: RequestSet) -> dict[str, Any]:
    """What Study A adds to a judged partition's metadata: its label counts, as Markdown."""
    return {"labels": dg.MetadataValue.md(label_summary_markdown(table))}


def asset_modules() -> Sequence[ModuleType]:
    from argassets.argument_quality.assets import ASSET_MODULES

    return ASSET_MODULES


def check_modules() -> Sequence[ModuleType]:
    from asset_checks.argument_quality import CHECK_MODULES

    return CHECK_MODULES


STUDY = StudyDefinition(
    name=STUDY_NAME,
    title="Study A: argument quality on Webis-ArgQuality-20 (pairwise A/B/Tie)",
    root_asset="aq_judgments",
    root_description="Pairwise verdicts of one judge model on every in-scope Study A prompt, per order and run.",
    inputs=JUDGING_INPUTS,
    n_runs=N_RUNS,
    scope_model=ArgumentQualityScope,
    default_sampling=AQ_DEFAULT_SAMPLING,
    build_requests=judging_requests,
    build_table=judgment_table,
    judging_metadata=judging_metadata,
    adaptive_pairs=adaptive_pairs,  # registry option `adaptive` (docs/study_design.md, section 3)
    import_keys=ImportKeys(
        columns=("comparison_id", "dimension", "strategy", "order"),
        allowed={
            "dimension": frozenset(DIMENSIONS),
            "strategy": frozenset(STRATEGIES),
            "order": frozenset({"ab", "ba"}),
        },
        defaults={"order": "ab"},
    ),
    asset_modules=asset_modules,
    check_modules=check_modules,
    export=EXPORT,  # argassets export eee | hf (docs/exports.md)
    # Without the published data the corpus comes from the Zenodo release or the embedded sample.
    needs_published_data=False,
    resources=lambda: {"webis_source": WebisSourceResource()},
)
