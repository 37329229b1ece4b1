"""Asset checks: Study B against its annotators (every published system judged on every task,
verdicts that only widen with the margin, the revoked consents left out, estimates inside their
intervals, PPI and the human labels consistent)."""

import dagster as dg
import numpy as np
import pandas as pd

from argassets.platform.reporting.presentation import markdown_table
from argassets.political.assets.annotators import political_ppi_estimates
from argassets.political.human_studies import ANNOTATION_TASKS, CONSENT_REVOKED
from asset_checks.political.kb_analysis import estimates_outside_intervals

#: The paper's systems: 22 models and its three ensembles, each judged on every task.
PUBLISHED_SYSTEMS = 25


@dg.asset_check(asset=dg.AssetKey("political_annotator_replacement"), blocking=True)
def political_annotator_replacement_judges_every_published_system(
    political_annotator_replacement: pd.DataFrame,
) -> dg.AssetCheckResult:
    """Every task has a verdict for each of the paper's 25 systems and the annotators' own row."""
    table = political_annotator_replacement
    published = table[table["system"].str.startswith("published:")]
    counts = published.groupby("task")["system"].nunique().reindex(list(ANNOTATION_TASKS), fill_value=0)
    humans = table[table["system"] == "human:rest"].groupby("task").size().reindex(list(ANNOTATION_TASKS), fill_value=0)
    missing_verdict = published[published["advantage_probability"].isna()]
    return dg.AssetCheckResult(
        passed=bool((counts == PUBLISHED_SYSTEMS).all() and (humans == 1).all() and missing_verdict.empty),
        metadata={
            "published_systems_per_task": dg.MetadataValue.json({k: int(v) for k, v in counts.items()}),
            "without_verdict": dg.MetadataValue.md(markdown_table(missing_verdict.head(10))),
        },
    )


@dg.asset_check(asset=dg.AssetKey("political_annotator_replacement"))
def political_annotator_replacement_verdicts_widen_with_the_margin(
    political_annotator_replacement: pd.DataFrame,
) -> dg.AssetCheckResult:
    """A system that can replace an annotator at a margin can at every larger one; intervals hold
    their estimates."""
    table = political_annotator_replacement[political_annotator_replacement["kind"] != "human"]
    columns = sorted(
        (c for c in table.columns if c.startswith("replaces_at_")), key=lambda c: float(c[12:].replace("_", "."))
    )
    verdicts = table[columns].to_numpy(dtype=bool)
    narrowing = table[(np.diff(verdicts.astype(int), axis=1) < 0).any(axis=1)]
    outside = estimates_outside_intervals(
        political_annotator_replacement,
        [(n, f"{n}_low", f"{n}_high") for n in ("agreement_with_rest", "advantage_probability")],
    )
    return dg.AssetCheckResult(
        passed=bool(len(columns) > 0 and narrowing.empty and outside.empty),
        metadata={
            "margins": dg.MetadataValue.json(columns),
            "narrowing": len(narrowing),
            "outside_interval": len(outside),
        },
    )


@dg.asset_check(asset=dg.AssetKey("political_affiliation_agreement"))
def political_affiliation_agreement_leaves_out_revoked_consent(
    political_affiliation_agreement: pd.DataFrame,
) -> dg.AssetCheckResult:
    """No group is ``CONSENT_REVOKED``; each task's three groups hold every stated label once
    (the annotators' own row), and intervals hold their estimates."""
    table = political_affiliation_agreement
    rest = table[(table["system"] == "human:rest") & (table["measure"] == "agreement")]
    labels = rest.groupby("task")["n_rows"].sum().to_dict()
    outside = estimates_outside_intervals(table, [("estimate", "low", "high")])
    return dg.AssetCheckResult(
        passed=bool(
            not table["group"].str.contains(CONSENT_REVOKED).any()
            and set(labels) == set(ANNOTATION_TASKS)
            and outside.empty
        ),
        metadata={
            "stated_labels_per_task": dg.MetadataValue.json({k: int(v) for k, v in labels.items()}),
            "outside_interval": len(outside),
        },
    )


@dg.asset_check(asset=political_ppi_estimates)
def political_ppi_estimates_agree_with_the_human_labels(political_ppi_estimates: pd.DataFrame) -> dg.AssetCheckResult:
    """Over the sampled buckets, every system's prediction-powered share overlaps the human-only one
    (both estimate the same share; PPI may only narrow it), and estimates lie in their intervals."""
    share = political_ppi_estimates[
        (political_ppi_estimates["estimand"] == "political_share")
        & (political_ppi_estimates["scope"] == "buckets")
        & (political_ppi_estimates["debate"] == "all")
    ]
    wide = share.pivot(index="system", columns="estimator", values=["low", "high"])
    apart = wide[
        (wide[("low", "ppi")] > wide[("high", "classical")]) | (wide[("high", "ppi")] < wide[("low", "classical")])
    ]
    outside = estimates_outside_intervals(political_ppi_estimates, [("estimate", "low", "high")])
    return dg.AssetCheckResult(
        passed=bool(len(wide) > 0 and apart.empty and outside.empty),
        metadata={"systems": len(wide), "ppi_apart_from_humans": len(apart), "outside_interval": len(outside)},
    )
