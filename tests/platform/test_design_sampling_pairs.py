"""Study designs: stratified item samples and pair designs (synthetic items, known answers)."""

import math

import numpy as np
import pandas as pd
import pytest

from argassets.platform.design.pairs import connection_entropy, random_pairs, strata_pairs
from argassets.platform.design.sampling import allocate_equally, bucket, stratified_sample

#: The political paper's pairwise study: items per decile bin 1..8 and its pair quotas.
PAPER_BINS = [1] * 13 + [2] * 13 + [3] * 13 + [4] * 14 + [5] * 14 + [6] * 14 + [7] * 14 + [8] * 5


def _items(n: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    return pd.DataFrame({"id": [f"x{i:04d}" for i in range(n)], "p": rng.random(n)})


def test_stratified_sample_takes_the_allocation_and_is_reproducible_whatever_the_row_order() -> None:
    items = _items()
    items["bucket"] = bucket(items["p"], {"low": (0.0, 0.2), "mid": (0.4, 0.6), "high": (0.8, 1.0)}).to_numpy()
    eligible = items.dropna(subset=["bucket"])
    allocation = {"low": 20, "mid": 10, "high": 20}
    first = stratified_sample(eligible, "bucket", allocation, seed=5, id_column="id")
    shuffled = stratified_sample(eligible.sample(frac=1, random_state=3), "bucket", allocation, seed=5, id_column="id")
    assert first["stratum"].value_counts().to_dict() == allocation
    assert first["id"].tolist() == shuffled["id"].tolist()
    assert first["id"].is_unique
    other = stratified_sample(eligible, "bucket", allocation, seed=6, id_column="id")
    assert set(other["id"]) != set(first["id"])
    assert ((first["stratum"] == "low") == (first["p"] <= 0.2)).all()


def test_stratified_sample_names_the_short_stratum_and_a_repeated_id() -> None:
    items = _items(10).assign(stratum=["a"] * 8 + ["b"] * 2)
    with pytest.raises(ValueError, match="stratum 'b': 3 items wanted, 2 available"):
        stratified_sample(items, "stratum", {"a": 1, "b": 3}, 0, "id")
    with pytest.raises(ValueError, match="item id 'x0000' occurs twice"):
        stratified_sample(pd.concat([items, items.head(1)]), "stratum", {"a": 1}, 0, "id")
    with pytest.raises(ValueError, match="overlap"):
        bucket([0.1], {"a": (0.0, 0.5), "b": (0.5, 1.0)})


def test_equal_allocation_gives_the_papers_bins_when_the_top_bin_has_five() -> None:
    # 100 arguments over 8 deciles, the last with only 5 eligible: the paper's 13,13,13,14,14,14,14,5.
    available = {b: 500 for b in range(1, 8)} | {8: 5}
    assert list(allocate_equally(available, 100).values()) == [13, 13, 13, 14, 14, 14, 14, 5]
    assert sum(allocate_equally({"a": 3, "b": 50}, 40).values()) == 40
    with pytest.raises(ValueError, match="100 items wanted but only 12"):
        allocate_equally({"a": 7, "b": 5}, 100)


def test_strata_pairs_recreate_the_papers_blocks_and_spread_the_degrees() -> None:
    ids = [f"a{i}" for i in range(100)]
    pairs = strata_pairs(ids, PAPER_BINS, within_per_stratum=44, between_per_stratum_pair=22, seed=0)
    assert len(pairs) == 934
    assert pairs["kind"].value_counts().to_dict() == {"between": 616, "within": 318}
    blocks = pd.crosstab(pairs["stratum_1"], pairs["stratum_2"])
    for s in range(1, 9):
        assert blocks.loc[s, s] == (10 if s == 8 else 44)  # C(5, 2) = 10 < 44: all of them
        for t in range(s + 1, 9):
            assert blocks.loc[s, t] == 22 and (t, s) not in blocks.stack()[blocks.stack() > 0].index
    unordered = {tuple(sorted(p)) for p in zip(pairs["item_1"], pairs["item_2"], strict=True)}
    assert len(unordered) == 934
    degree = pd.concat([pairs["item_1"], pairs["item_2"]]).value_counts()
    # Balanced: the paper's degrees too are 17..19 for the 95 items of bins 1-7 (35 for bin 8's five).
    assert degree.min() >= 17 and degree[[i for i, b in zip(ids, PAPER_BINS, strict=True) if b < 8]].max() <= 19
    again = strata_pairs(ids, PAPER_BINS, 44, 22, seed=0)
    pd.testing.assert_frame_equal(pairs, again)


def test_connection_entropy_is_log2_of_the_bins_for_an_even_spread_and_zero_for_one_bin() -> None:
    bins = np.array([0, 1, 2, 3] * 2)
    star = np.array([(0, j) for j in (1, 2, 3, 4)])  # item 0 meets bins 1, 2, 3, 0
    entropy = connection_entropy(star, bins, 4)
    assert entropy[0] == pytest.approx(2.0) and entropy[1] == pytest.approx(0.0)


def test_random_pairs_stay_in_their_group_and_never_repeat() -> None:
    ids = [f"i{k}" for k in range(30)]
    groups = [k % 3 for k in range(30)]
    pairs = random_pairs(ids, 120, seed=4, groups=groups)
    assert (pairs["stratum_1"] == pairs["stratum_2"]).all()
    assert len({tuple(sorted(p)) for p in zip(pairs["item_1"], pairs["item_2"], strict=True)}) == 120
    with pytest.raises(ValueError, match="136 pairs wanted but only 135 exist"):
        random_pairs(ids, 136, seed=0, groups=groups)
    assert math.comb(10, 2) * 3 == 135
