"""A study's Dagster definitions, built from its declaration: assets, checks, job, resources.

The code location (``argassets/definitions.py``) merges every study's definitions with the
platform's resources, sensors and schedules (``dg.Definitions.merge``, as Dagster's own projects
merge their domains).
"""

from __future__ import annotations

from typing import Any

import dagster as dg

from argassets.platform.judging.study_asset import judging_asset
from argassets.platform.operations.automation import operations_layout, with_automation
from argassets.platform.operations.jobs import RegistryLoader, study_job
from argassets.platform.study import Studies, StudyDefinition


def study_assets(study: StudyDefinition) -> list[Any]:
    """The study's assets: the judging asset the platform builds, then those of its asset modules."""
    return [judging_asset(study), *dg.load_assets_from_modules(list(study.asset_modules()))]


def study_definitions(study: StudyDefinition, load_registry: RegistryLoader) -> dg.Definitions:
    """The study's assets (with the platform's automation), checks, partitioned job and own resources."""
    alone = Studies((study,))
    assets = with_automation(study_assets(study), alone)
    return dg.Definitions(
        assets=assets,
        asset_checks=dg.load_asset_checks_from_modules([*study.check_modules(), *study.asset_modules()]),
        jobs=[study_job(study.name, operations_layout(assets, alone), load_registry)],
        resources=dict(study.resources()),
    )


def code_location_assets(studies: Studies) -> list[Any]:
    """Every study's assets, in study order (what the operations layout of the code location reads)."""
    return [asset for study in studies for asset in study_assets(study)]
