"""An entry's ``adaptive`` option: judge a pairwise partition in rounds and stop on a stated criterion.

``adaptive = { stop = "rank_stability", threshold = 0.99, max_share = 0.5 }`` in a registry entry
turns it on (off by default); the rounds are planned by
:func:`argassets.platform.design.adaptive.plan_round` (docs/study_design.md, section 3).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from argassets.platform.design.adaptive import AdaptiveSettings

#: What :func:`~argassets.platform.design.adaptive.plan_round` calls each stop, in the words of the reports.
STOP_WORDS: dict[str, str] = {
    "rank_stable": "rank stability",
    "interval_width": "interval width",
    "predicted_agreement": "predicted agreement",
    "budget": "max share",
    "exhausted": "every pair judged",
}


class AdaptiveJudging(BaseModel):
    """How a partition is judged in rounds: the first round, each next one, the stop and the budget.

    ``threshold`` is the stated criterion's bound: a Spearman rho in (0, 1] for ``rank_stability``
    (now against the lagged earlier state) and ``predicted_agreement``, a mean 95% interval width
    of the BT strengths (> 0, in logits) for ``interval_width``. Shares are of the partition's
    candidate pairs per judged cell (Study A: a dimension and strategy).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    stop: Literal["rank_stability", "interval_width", "predicted_agreement"]
    threshold: float
    #: ``information`` (expected information gain) or ``random`` (uniform rounds, the control).
    selection: Literal["information", "random"] = "information"
    first_round: float = Field(default=0.1, gt=0.0, le=1.0)
    round_size: float = Field(default=0.05, gt=0.0, le=1.0)
    #: The budget: judging stops when this share of the candidate pairs is judged.
    max_share: float = Field(default=1.0, gt=0.0, le=1.0)
    seed: int = 0

    @model_validator(mode="after")
    def _threshold_fits_the_stop(self) -> AdaptiveJudging:
        if self.stop == "interval_width":
            if not self.threshold > 0:
                raise ValueError(f"threshold of stop 'interval_width' must be a width > 0, got {self.threshold!r}")
        elif not 0 < self.threshold <= 1:
            raise ValueError(
                f"threshold of stop '{self.stop}' must be a Spearman rho in (0, 1], got {self.threshold!r}"
            )
        return self

    def settings(self) -> AdaptiveSettings:
        """The planner's settings: only the stated criterion is on (besides the budget)."""

        def bound(stop: str) -> float | None:
            return self.threshold if self.stop == stop else None

        return AdaptiveSettings(
            selection=self.selection,
            first_round=self.first_round,
            round_size=self.round_size,
            max_share=self.max_share,
            seed=self.seed,
            stability=bound("rank_stability"),
            interval_width=bound("interval_width"),
            agreement=bound("predicted_agreement"),
        )

    def describe(self) -> str:
        """One line: "adaptive (stop rank_stability >= 0.99, information rounds, at most 50%)"."""
        relation = "<=" if self.stop == "interval_width" else ">="
        return (
            f"adaptive (stop {self.stop} {relation} {self.threshold:g}, {self.selection} rounds, "
            f"at most {self.max_share:.0%})"
        )
