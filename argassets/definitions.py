"""The single place that assembles the code location."""

import dagster as dg

from argassets.catalog import ASSET_MODULES, CHECK_MODULES
from argassets.platform.operations.automation import with_automation
from argassets.platform.operations.run_recovery import recover_at_load
from resources.build import build_resources
from sensors import JOBS, SCHEDULES, SENSORS
from sensors.settings import run_executor

# Any process loading the code location (dagster asset materialize, dagster dev, a run worker) first
# fails runs SIGKILLed earlier on this machine and frees their pool slots.
recover_at_load()

defs = dg.Definitions(
    # Declarative automation of everything downstream of the judged partitions (argassets/platform/operations/automation.py).
    assets=with_automation(dg.load_assets_from_modules(ASSET_MODULES)),
    asset_checks=dg.load_asset_checks_from_modules(CHECK_MODULES + ASSET_MODULES),
    resources=build_resources(),
    sensors=SENSORS,
    schedules=SCHEDULES,
    jobs=JOBS,
    # Dagster's default executor; ARGASSETS_EXECUTOR=in_process makes in-process steps its default mode.
    executor=run_executor(),
)
