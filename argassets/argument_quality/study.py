"""Study A declared: argument quality on Webis-ArgQuality-20, pairwise verdicts (A, B or Tie)."""

from __future__ import annotations

from argassets.argument_quality.assets import ASSET_MODULES
from argassets.argument_quality.judgments import AQ_DEFAULT_SAMPLING, build_requests, judgment_table, workload
from argassets.argument_quality.release_facts import WEBIS_RELEASE, WEBIS_TOPIC_IDS
from argassets.argument_quality.resources import WebisSourceResource
from argassets.argument_quality.scope import DIMENSIONS, STRATEGIES, STUDY_NAME, ArgumentQualityScope
from argassets.platform.study import ImportKeys, StudyDefinition
from asset_checks.argument_quality import CHECK_MODULES

STUDY = StudyDefinition(
    name=STUDY_NAME,
    title="Study A: argument quality on Webis-ArgQuality-20 (pairwise A/B/Tie)",
    root_asset="aq_judgments",
    asset_modules=ASSET_MODULES,
    check_modules=CHECK_MODULES,
    scope_model=ArgumentQualityScope,
    default_sampling=AQ_DEFAULT_SAMPLING,
    build_requests=build_requests,
    build_table=judgment_table,
    import_keys=ImportKeys(
        columns=("comparison_id", "dimension", "strategy", "order"),
        allowed={
            "dimension": frozenset(DIMENSIONS),
            "strategy": frozenset(STRATEGIES),
            "order": frozenset({"ab", "ba"}),
        },
        defaults={"order": "ab"},
    ),
    release_facts={
        "texts": WEBIS_RELEASE.texts,
        "comparisons_per_dimension": WEBIS_RELEASE.comparisons_per_dimension,
        "topics": WEBIS_TOPIC_IDS,
    },
    # Without the published data the corpus comes from the Zenodo release or the embedded sample.
    needs_published_data=False,
    resources=lambda: {"webis_source": WebisSourceResource()},
    workload=workload,
)
