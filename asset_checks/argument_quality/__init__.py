"""Study A's checks: judgments, reports, the published rows in the reports, length bias."""

from asset_checks.argument_quality import judgments, length_bias, published, reliability, reports

CHECK_MODULES = [judgments, reports, published, length_bias, reliability]
