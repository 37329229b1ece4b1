"""Asset checks: political (Study B)."""

import dagster as dg
import pandas as pd

from argassets.platform.registry.partitions import study_partitions
from argassets.platform.resources.data import PublishedDataResource
from argassets.political.assets.prompts import political_study_items
from argassets.political.assets.validation import political_pairwise_connections
from argassets.political.human_studies import read_pairwise_study, read_pointwise_study
from argassets.political.scope import STUDY_NAME


@dg.asset_check(asset="political_predictions", blocking=True, partitions_def=study_partitions(STUDY_NAME))
def political_scores_in_range(political_predictions: pd.DataFrame) -> dg.AssetCheckResult:
    """Every answer is a score 0-100 (an integer), NA (no score) or invalid (no score, kept and counted)."""
    frame = political_predictions
    scored = frame["is_valid"] & ~frame["is_na"]
    scores = frame.loc[scored, "score"]
    bad_scores = scores.isna() | (scores < 0) | (scores > 100) | (scores != scores.round())
    stray = frame.loc[~scored, "score"].notna()
    na_invalid = frame["is_na"] & ~frame["is_valid"]
    bad = int(bad_scores.sum() + stray.sum() + na_invalid.sum())
    return dg.AssetCheckResult(
        passed=bad == 0,
        metadata={
            "rows": len(frame),
            "scores": int(scored.sum()),
            "na": int(frame["is_na"].sum()),
            "invalid": int((~frame["is_valid"]).sum()),
            "rows_breaking_the_rule": bad,
            "min_score": float(scores.min()) if len(scores) else 0.0,
            "max_score": float(scores.max()) if len(scores) else 0.0,
        },
    )


@dg.asset_check(asset=political_pairwise_connections, blocking=True)
def political_pairwise_graph_connected(political_pairwise_connections: pd.DataFrame) -> dg.AssetCheckResult:
    """The 934 annotated pairs connect all 100 arguments (one component), as Bradley-Terry needs."""
    components = int(political_pairwise_connections["component"].nunique())
    isolated = political_pairwise_connections.loc[political_pairwise_connections["degree"] == 0, "meta_id"].tolist()
    return dg.AssetCheckResult(
        passed=components == 1 and not isolated and len(political_pairwise_connections) == 100,
        metadata={
            "arguments": len(political_pairwise_connections),
            "components": components,
            "isolated": dg.MetadataValue.json(isolated),
        },
    )


@dg.asset_check(asset=political_study_items, blocking=True)
def political_study_items_accounted(
    data: PublishedDataResource, political_study_items: pd.DataFrame
) -> dg.AssetCheckResult:
    """Every study item appears once, matched to a KB argument or listed as unmatched."""
    human = data.require("political/human")
    expected = {("pointwise", m) for m in read_pointwise_study(human).items["meta_id"]}
    expected |= {("pairwise", m) for m in read_pairwise_study(human).items["meta_id"]}
    got = list(zip(political_study_items["study"], political_study_items["meta_id"], strict=True))
    missing = sorted(expected - set(got))
    repeated = len(got) - len(set(got))
    matched = political_study_items["argument_id"].notna()
    consistent = bool(((political_study_items["match"] == "unmatched") == ~matched).all())
    unmatched = political_study_items.loc[~matched, ["study", "meta_id"]].astype(str).to_dict("records")
    return dg.AssetCheckResult(
        passed=not missing and repeated == 0 and consistent,
        metadata={
            "items": len(got),
            "matched": int(matched.sum()),
            "unmatched": dg.MetadataValue.json(unmatched),
            "missing_items": dg.MetadataValue.json([list(m) for m in missing[:20]]),
            "repeated_items": repeated,
        },
    )
