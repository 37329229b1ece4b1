"""The persuasion study declared: one object, as Study A and Study B declare theirs.

It joins a code location with ``ARGASSETS_EXTRA_STUDIES=tests.platform.third_study.study`` (the
one line in the list of studies); no shared file names it.
"""

from __future__ import annotations

from argassets.platform.study import ImportKeys, StudyDefinition
from tests.platform.third_study import assets, checks, science

STUDY = StudyDefinition(
    name=science.STUDY_NAME,
    title="A third study: persuasiveness of synthetic arguments (pairwise A/B/Tie), declared in tests/",
    root_asset="persuasion_judgments",
    root_description="Verdicts (A, B or Tie) of one judge model on every in-scope pair, per run.",
    inputs=("persuasion_pairs", "persuasion_texts"),
    n_runs=science.N_RUNS,
    scope_model=science.PersuasionScope,
    default_sampling=science.SAMPLING,
    build_requests=science.judging_requests,
    build_table=science.judgment_table,
    import_keys=ImportKeys(columns=("pair_id",)),
    asset_modules=lambda: (assets,),
    check_modules=lambda: (checks,),
)
