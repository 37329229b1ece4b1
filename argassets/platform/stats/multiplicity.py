"""Adjusting p-values for the number of comparisons: Holm (default) and Benjamini-Hochberg.

Both are ``statsmodels.stats.multitest.multipletests``; this module only fixes the names the
reports use and leaves undefined p-values (NaN) out of the family instead of letting one NaN
poison it.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from statsmodels.stats.multitest import multipletests

__all__ = ["ADJUSTMENTS", "Adjustment", "adjust_p_values"]

Adjustment = Literal["holm", "bh"]

#: Report name -> statsmodels method: Holm's step-down (family-wise error) and Benjamini-Hochberg
#: (false discovery rate).
ADJUSTMENTS: dict[str, str] = {"holm": "holm", "bh": "fdr_bh"}


def adjust_p_values(p_values: np.ndarray, method: str = "holm") -> np.ndarray:
    """Adjusted p-values of one family of comparisons; NaN stays NaN and does not count.

    Raises
    ------
    ValueError
        An unknown ``method`` (named), or a p-value outside [0, 1].
    """
    if method not in ADJUSTMENTS:
        raise ValueError(f"p-value adjustment {method!r} is not one of {', '.join(ADJUSTMENTS)}")
    p = np.asarray(p_values, dtype=float)
    defined = np.isfinite(p)
    if ((p[defined] < 0) | (p[defined] > 1)).any():
        raise ValueError(f"p-values must lie in [0, 1], got {p[defined].min()}..{p[defined].max()}")
    out = np.full(p.shape, np.nan)
    if defined.any():
        out[defined] = multipletests(p[defined], method=ADJUSTMENTS[method])[1]
    return out
