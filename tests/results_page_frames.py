"""Small report tables of both studies, shaped as their assets write them, for the results-page tests."""

from __future__ import annotations

import numpy as np
import pandas as pd

from argassets.platform.registry.entries import ModelRegistry, parse_registry

DIMENSIONS = ["overall", "logic", "rhetoric", "dialectic"]


def aq_agreement_frame() -> pd.DataFrame:
    """An ``aq_agreement_report``: a measured model, a baseline with higher numbers, a published row."""
    rows = []
    for model, kind, kappa in (
        ("judge-a", "measured", 0.31),
        ("judge-b", "measured", 0.42),
        ("longer-wins", "baseline", 0.6),
    ):
        for strategy in ("zero", "few"):
            for d, dimension in enumerate([*DIMENSIONS[1:], "mean"]):
                rows.append(
                    {
                        "model": model,
                        "strategy": strategy,
                        "dimension": dimension,
                        "kind": kind,
                        "cohen_kappa": kappa + 0.01 * d + (0.05 if strategy == "few" else 0.0),
                        "pearson": 0.9 - kappa,
                        "krippendorff_alpha": kappa - 0.02,
                        "percent_agreement": 50 + 10 * kappa,
                        "scope": "full",
                        "is_baseline": kind == "baseline",
                        "best_set": model == "judge-b" and strategy == "few",
                        "published_as": "llama-70B-big" if model == "judge-b" else None,
                        "reproduced": ("true" if strategy == "few" else "false") if model == "judge-b" else None,
                        "metrics_reproduced": 7 if model == "judge-b" else pd.NA,
                        "metrics_compared": 7 if model == "judge-b" else pd.NA,
                        "delta_cohen_kappa": 0.01 if model == "judge-b" else np.nan,
                    }
                )
    published = {"model": "published:llama-70B-big", "strategy": "few", "dimension": "mean", "kind": "published"}
    rows.append({**published, "cohen_kappa": 0.493, "pearson": 0.6, "best_set": False, "is_baseline": False})
    return pd.DataFrame(rows)


def aq_length_bias_frame() -> pd.DataFrame:
    """An ``aq_length_bias``: the experts and three configurations, per dimension and over all."""
    rows = []
    for dimension in ["logic", "rhetoric", "dialectic", "all"]:
        rows.append(
            {"model": "experts", "strategy": "human", "dimension": dimension, "kind": "reference", "share_longer": 0.62}
        )
        for model, kind, share in (
            ("judge-a", "measured", 0.7),
            ("judge-b", "measured", 0.66),
            ("longer-wins", "baseline", 1.0),
        ):
            rows.append(
                {
                    "model": model,
                    "strategy": "zero",
                    "dimension": dimension,
                    "kind": kind,
                    "share_longer": share,
                    "share_longer_experts": 0.61,
                }
            )
    return pd.DataFrame(rows)


POLITICAL_REGISTRY: ModelRegistry = parse_registry(
    {
        "models": [
            {"name": "random", "backend": "random", "studies": ["political"]},
            {"name": "local-judge", "backend": "openai", "model_id": "org/local", "studies": ["political"]},
            {
                "name": "published-gpt-4.5",
                "backend": "import",
                "format": "published_tsv",
                "path": "political/predictions/gpt45_preview.tsv",
                "model_id": "gpt-4.5-preview-2025-02-27",
                "studies": ["political"],
            },
            {
                "name": "published-phi-4",
                "backend": "import",
                "format": "published_tsv",
                "path": "political/predictions/phi4.tsv",
                "model_id": "microsoft/phi-4",
                "studies": ["political"],
            },
        ]
    }
)


def political_pairwise_frame() -> pd.DataFrame:
    """A ``political_pairwise_validation``: platform, published (twice named), human and baseline rows."""
    systems = [
        ("local-judge", "model", 0.41, 0.55),
        ("random", "baseline", 0.083, 0.34),
        ("published-gpt-4.5", "model", 0.62, 0.66),
        ("published:gpt_4_5_preview_2025_02_27", "published", 0.63, 0.66),
        ("published:phi_4", "published", 0.45, 0.58),
        ("published:ensemble3", "published-ensemble", 0.7, 0.7),
        ("human:left", "human", 0.9, 0.8),
        ("baseline:all-equal", "baseline", 0.0, 0.33),
        ("baseline:worst", "baseline", -1.0, 0.1),
    ]
    rows = []
    for subset, shift in (("all", 0.0), ("P11", 0.05), ("P10", -0.1), ("P01", -0.05), ("P00", 0.02)):
        for system, kind, alpha, f1 in systems:
            rows.append(
                {
                    "system": system,
                    "kind": kind,
                    "subset": subset,
                    "d_footrule": 0.5 + alpha / 2,
                    "d_tau": 0.5 + alpha / 3,
                    "alpha_ordinal": alpha + shift,
                    "macro_f1": f1,
                    "n_pairs": 934,
                    "n_items_scored": 96 if system == "random" else 100,
                }
            )
    return pd.DataFrame(rows)


def political_pointwise_frame() -> pd.DataFrame:
    """A ``political_pointwise_validation``: per system and partition, and the agreement rows."""
    rows = []
    for system, kind, f1 in (
        ("local-judge", "model", 0.6),
        ("random", "baseline", 0.5),
        ("published:gpt_4_5_preview_2025_02_27", "published", 0.7),
    ):
        for partition in ("full", "political"):
            rows.append({"system": system, "kind": kind, "partition": partition, "macro_f1": f1, "n": 1000})
    rows.append({"system": "human", "kind": "human", "partition": "full", "alpha_nominal": 0.35, "n": 1000})
    frame = pd.DataFrame(rows)
    for column in ("micro_f1", "precision", "recall", "balanced_accuracy", "alpha_nominal", "missing_share"):
        if column not in frame.columns:
            frame[column] = np.nan
        frame[column] = frame[column].astype(float)
    return frame
