"""Every asset and check module of the code location, from the list of studies.

Read by ``definitions.py`` and by the operations layout of the jobs and schedules
(``sensors/layout.py``), so that both follow the same modules.
"""

from types import ModuleType

from argassets.platform.study import studies


def asset_modules() -> list[ModuleType]:
    """Every study's asset modules, in study order."""
    return [module for study in studies() for module in study.asset_modules]


def check_modules() -> list[ModuleType]:
    """Every study's check modules, in study order."""
    return [module for study in studies() for module in study.check_modules]


ASSET_MODULES = asset_modules()
CHECK_MODULES = check_modules()
