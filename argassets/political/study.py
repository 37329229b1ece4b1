"""Study B declared: political positions (0-100 left-right scores) of QT30 arguments, with a Neo4j KB."""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType
from typing import Any

import pandas as pd

from argassets.platform.study import ImportKeys, JudgedElsewhere, RequestSet, StudyDefinition
from argassets.political.cli_retrieval import add_commands
from argassets.political.exports import EXPORT
from argassets.political.predictions import (
    JUDGING_INPUTS,
    PROTOCOL_SAMPLING,
    is_published_tsv,
    judging_requests,
    prediction_metadata,
    prediction_table,
    published_predictions,
)
from argassets.political.prompts import N_REPETITIONS
from argassets.political.resources import neo4j_resources
from argassets.political.scope import STUDY_NAME, PoliticalScope


def judging_metadata(table: pd.DataFrame, asked: RequestSet) -> dict[str, Any]:
    """What Study B adds to a judged partition's metadata: its scores and NA answers."""
    return prediction_metadata(table)


def asset_modules() -> Sequence[ModuleType]:
    from argassets.political.assets import ASSET_MODULES

    return ASSET_MODULES


def check_modules() -> Sequence[ModuleType]:
    from asset_checks.political import CHECK_MODULES

    return CHECK_MODULES


STUDY = StudyDefinition(
    name=STUDY_NAME,
    title="Study B: political positions of QT30 arguments (scores 0-100 or NA)",
    root_asset="political_predictions",
    root_description="Five left-right scores (0-100, NA or invalid) per KB argument from one judge model.",
    inputs=JUDGING_INPUTS,
    n_runs=N_REPETITIONS,
    scope_model=PoliticalScope,
    default_sampling=PROTOCOL_SAMPLING,
    build_requests=judging_requests,
    build_table=prediction_table,
    judging_metadata=judging_metadata,
    # The paper's 22 models: their published prediction files, read instead of judged.
    judged_elsewhere=JudgedElsewhere(applies=is_published_tsv, table=published_predictions),
    import_keys=ImportKeys(columns=("argument_id",)),
    asset_modules=asset_modules,
    check_modules=check_modules,
    export=EXPORT,  # argassets export eee | hf (docs/exports.md)
    # QT30 and the human studies have no embedded sample.
    needs_published_data=True,
    resources=neo4j_resources,
    commands=add_commands,  # retrieve, debate, persona (docs/retrieval.md)
)
