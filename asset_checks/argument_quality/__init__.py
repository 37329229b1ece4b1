"""Study A's checks: judgments, reports, the published rows in the reports, length bias, reliability, perturbations."""

from asset_checks.argument_quality import judgments, length_bias, prompt_axis, published, reliability, reports

CHECK_MODULES = [judgments, reports, published, length_bias, reliability, prompt_axis]
