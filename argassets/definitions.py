"""The single place that assembles the code location."""

import dagster as dg

import asset_checks.aq_reports
import asset_checks.argument_quality
import asset_checks.knowledge_base
import asset_checks.political
from argassets.automation import with_automation
from argassets.assets import aggregation, corpora, judgments, knowledge_base, political, prompts, reports
from resources.build import build_resources
from sensors import JOBS, SCHEDULES, SENSORS

ASSET_MODULES = [corpora, prompts, judgments, aggregation, reports, knowledge_base, political]
CHECK_MODULES = [
    asset_checks.argument_quality,
    asset_checks.aq_reports,
    asset_checks.knowledge_base,
    asset_checks.political,
]

defs = dg.Definitions(
    # Declarative automation of everything downstream of the judged partitions (argassets/automation.py).
    assets=with_automation(dg.load_assets_from_modules(ASSET_MODULES)),
    asset_checks=dg.load_asset_checks_from_modules(CHECK_MODULES + ASSET_MODULES),
    resources=build_resources(),
    sensors=SENSORS,
    schedules=SCHEDULES,
    jobs=JOBS,
)
