"""The single place that assembles the code location: every study's definitions, merged with the platform's."""

import dagster as dg

from argassets.platform.operations.run_recovery import recover_at_load
from argassets.platform.operations.slot_wait import sleep_between_slot_claims
from argassets.platform.operations.study_definitions import study_definitions
from argassets.platform.study import Studies
from argassets.studies import code_location_studies
from resources.build import build_resources
from sensors import SCHEDULES, code_location_sensors
from sensors.layout import code_location_layout
from sensors.settings import run_executor


def build_definitions(studies: Studies) -> dg.Definitions:
    """Each study's assets, checks, job and resources (built from its declaration), merged with the
    platform's resources, the sensors and schedules, and the executor."""
    resources = build_resources(studies)
    platform = dg.Definitions(
        resources=resources,
        sensors=code_location_sensors(code_location_layout(studies)),
        schedules=SCHEDULES,
        # Dagster's default executor; ARGASSETS_EXECUTOR=in_process makes in-process steps its default mode.
        executor=run_executor(),
    )
    registry = resources["registry"]
    return dg.Definitions.merge(*(study_definitions(study, registry.load) for study in studies), platform)


# Any process loading the code location (dagster asset materialize, dagster dev, a run worker) first
# fails runs SIGKILLed earlier on this machine and frees their pool slots.
recover_at_load()
# ... and every process that runs steps waits for a pool slot asleep, not spinning a core.
sleep_between_slot_claims()

defs = build_definitions(code_location_studies())
