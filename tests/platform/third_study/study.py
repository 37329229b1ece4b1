"""The persuasion study declared: one object, as Study A and Study B declare theirs."""

from __future__ import annotations

from argassets.platform.study import ImportKeys, StudyDefinition
from tests.platform.third_study import assets, checks, science

STUDY = StudyDefinition(
    name=science.STUDY_NAME,
    title="A third study: persuasiveness of synthetic arguments (pairwise A/B/Tie), declared in tests/",
    root_asset="persuasion_judgments",
    asset_modules=(assets,),
    check_modules=(checks,),
    scope_model=science.PersuasionScope,
    default_sampling=science.SAMPLING,
    build_requests=science.build_requests,
    build_table=science.judgment_table,
    import_keys=ImportKeys(columns=("pair_id",)),
)
