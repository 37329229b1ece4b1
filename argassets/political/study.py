"""Study B declared: political positions (0-100 left-right scores) of QT30 arguments, with a Neo4j KB."""

from __future__ import annotations

from argassets.platform.study import ImportKeys, StudyDefinition
from argassets.political.assets import ASSET_MODULES
from argassets.political.predictions import PROTOCOL_SAMPLING, build_requests, prediction_table, workload
from argassets.political.release_facts import PUBLISHED_ENSEMBLE_ROWS, PUBLISHED_NODE_IDS, QT30_MANIFEST
from argassets.political.resources import neo4j_resources
from argassets.political.scope import STUDY_NAME, PoliticalScope
from asset_checks.political import CHECK_MODULES

STUDY = StudyDefinition(
    name=STUDY_NAME,
    title="Study B: political positions of QT30 arguments (scores 0-100 or NA)",
    root_asset="political_predictions",
    asset_modules=ASSET_MODULES,
    check_modules=CHECK_MODULES,
    scope_model=PoliticalScope,
    default_sampling=PROTOCOL_SAMPLING,
    build_requests=build_requests,
    build_table=prediction_table,
    import_keys=ImportKeys(columns=("argument_id",)),
    release_facts={
        "published_node_ids": PUBLISHED_NODE_IDS,
        "published_ensemble_rows": PUBLISHED_ENSEMBLE_ROWS,
        "qt30_manifest": QT30_MANIFEST,
    },
    # QT30 and the human studies have no embedded sample.
    needs_published_data=True,
    resources=neo4j_resources,
    workload=workload,
)
