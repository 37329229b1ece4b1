"""Study A's checks: judgments and reports."""

from asset_checks.argument_quality import judgments, reports

CHECK_MODULES = [judgments, reports]
