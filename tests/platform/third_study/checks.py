"""The persuasion study's checks: the experts' comparison graph of every topic is connected."""

import dagster as dg
import pandas as pd

from tests.platform.third_study.science import disconnected_topics


@dg.asset_check(asset="persuasion_pairs", blocking=True)
def persuasion_pairs_connected(persuasion_pairs: pd.DataFrame) -> dg.AssetCheckResult:
    """Every topic's expert comparison graph is one component (else BT scores are not comparable)."""
    split = disconnected_topics(persuasion_pairs)
    return dg.AssetCheckResult(
        passed=not split,
        metadata={"topics": int(persuasion_pairs["topic_id"].nunique()), "disconnected_topics": split},
    )
