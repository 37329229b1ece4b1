"""Every asset and check module of the code location, per study.

Read by ``definitions.py`` and by the operations layout of the jobs and schedules
(``sensors/layout.py``), so that both follow the same modules.
"""

from argassets.argument_quality.assets import ASSET_MODULES as ARGUMENT_QUALITY_ASSETS
from argassets.political.assets import ASSET_MODULES as POLITICAL_ASSETS
from asset_checks.argument_quality import CHECK_MODULES as ARGUMENT_QUALITY_CHECKS
from asset_checks.political import CHECK_MODULES as POLITICAL_CHECKS

ASSET_MODULES = [*ARGUMENT_QUALITY_ASSETS, *POLITICAL_ASSETS]
CHECK_MODULES = [*ARGUMENT_QUALITY_CHECKS, *POLITICAL_CHECKS]
