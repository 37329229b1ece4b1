"""The run configuration of a report's clustered intervals (docs/uncertainty.md), one for every report."""

from __future__ import annotations

from typing import Literal

import dagster as dg

from argassets.platform.stats.intervals import BootstrapSettings


class IntervalConfig(dg.Config):
    """Level, resamples, seed and method of a report's intervals, and the p-value adjustment of its comparisons."""

    interval_level: float = 0.95
    interval_resamples: int = 2000
    interval_seed: int = 20_240_229
    interval_method: Literal["BCa", "percentile"] = "BCa"
    #: Widen by sqrt(C / (C - 1)) * t_{C-1} / z for C clusters (docs/uncertainty.md).
    small_cluster_correction: bool = True
    #: ``holm`` (family-wise error) or ``bh`` (Benjamini-Hochberg, false discovery rate).
    adjustment: Literal["holm", "bh"] = "holm"

    def interval_settings(self) -> BootstrapSettings:
        """The settings, validated (a level outside (0, 1) is an error naming it)."""
        return BootstrapSettings(
            level=self.interval_level,
            n_resamples=self.interval_resamples,
            seed=self.interval_seed,
            method=self.interval_method,
            small_cluster_correction=self.small_cluster_correction,
        )
