"""Fresh Study B designs drawn from the knowledge base, the way the paper drew its two studies.

Pointwise
    Arguments bucketed by E3's probability of NA (``low``: confidently political, ``mid``:
    ambiguous, ``high``: confidently apolitical; the paper's ``n_type``), a stated number drawn
    from each bucket (the paper: 400 / 200 / 400).
Pairwise
    Arguments E3 calls political with at most ``max_prob_na``, binned into deciles of E3's mean
    position (the validation's binning rule), drawn per decile; pairs within each decile and between
    each two (the paper: 44 and 22, which gives its 934 pairs), at random, or as the first round of
    the adaptive design.
Gold tasks
    From the published studies: pointwise items all three annotators labelled alike, and pairs
    at least five of six annotators ordered alike, whose arguments the new design does not use.
Pilot figures for the simulation
    The published pairwise votes give the spread of the true strengths (observed variance of the
    BT strengths minus their mean squared standard error) and the share of "equal" answers; the
    published pointwise labels give the Beta distribution of the items' probability of a "yes".
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from argassets.platform.design.adaptive import AdaptiveSettings, plan_round
from argassets.platform.design.pairs import random_pairs, strata_pairs
from argassets.platform.design.sampling import allocate_equally, bucket, stratified_sample
from argassets.platform.design.simulation import AnnotatorPool, pool_from_pilot
from argassets.platform.design.tasks import GOLD, TASK_COLUMNS, task_id
from argassets.political.human_studies import PairwiseStudy, PointwiseStudy
from argassets.political.study_design.questions import LEFT, POLITICAL, RIGHT, argument_text
from argassets.political.validation.ranking import bt_strengths
from argassets.political.validation.win_matrices import decile_bins, human_win_matrices

__all__ = [
    "decile_label",
    "design_pairs",
    "kb_candidates",
    "pairwise_gold",
    "pairwise_items",
    "pilot_label_counts",
    "pilot_pool",
    "pointwise_gold",
    "pointwise_items",
    "published_allocation",
]

ITEM_COLUMNS = [
    "study",
    "argument_id",
    "stratum",
    "bin_index",
    "prob_na",
    "mean",
    "speaker",
    "episode",
    "proposition",
    "locution",
    "draw",
]


def decile_label(index: int) -> str:
    """The published label of a decile bin: 0 -> ``0-10``, 1 -> ``10-20``, ..."""
    return f"{10 * index}-{10 * (index + 1)}"


def kb_candidates(arguments: pd.DataFrame, ensembles: pd.DataFrame, system: str = "E3") -> pd.DataFrame:
    """KB arguments with ``system``'s probability of NA and mean position (NaN mean when no score)."""
    stats = ensembles.loc[ensembles["system"] == system, ["argument_id", "prob_na", "mean"]]
    if stats.empty:
        raise ValueError(f"the ensembles table has no rows of {system!r}")
    joined = arguments[["argument_id", "speaker", "episode", "proposition", "locution"]].merge(
        stats, on="argument_id", how="inner"
    )
    return joined.sort_values("argument_id", kind="stable").reset_index(drop=True)


def pointwise_items(
    candidates: pd.DataFrame, buckets: Mapping[str, tuple[float, float]], allocation: Mapping[str, int], seed: int
) -> pd.DataFrame:
    """The pointwise sample: ``allocation[bucket]`` arguments from each probability-of-NA bucket."""
    framed = candidates.assign(stratum=bucket(candidates["prob_na"], buckets).to_numpy())
    sample = stratified_sample(framed.dropna(subset=["stratum"]), "stratum", allocation, seed, "argument_id")
    return sample.assign(study="pointwise", bin_index=-1)[ITEM_COLUMNS]


def published_allocation(study: PairwiseStudy) -> dict[str, int]:
    """Items per decile bin of the published pairwise study (13, 13, 13, 14, 14, 14, 14, 5)."""
    counts = study.items.groupby("bin_index").size()
    return {decile_label(int(b)): int(n) for b, n in counts.items()}


def pairwise_items(
    candidates: pd.DataFrame, max_prob_na: float, n_items: int, allocation: Mapping[str, int] | None, seed: int
) -> pd.DataFrame:
    """The pairwise sample: political arguments per decile of the mean position.

    ``allocation`` (bin label -> items) as given, or ``None``: ``n_items`` spread equally over
    the deciles that have eligible arguments (:func:`~argassets.platform.design.sampling.allocate_equally`).
    """
    eligible = candidates[(candidates["prob_na"] <= max_prob_na) & candidates["mean"].notna()].copy()
    eligible["bin_index"] = decile_bins(eligible["mean"].to_numpy())
    eligible["stratum"] = eligible["bin_index"].map(decile_label)
    if allocation is None:
        available = eligible.groupby("stratum").size()
        order = sorted(available.index, key=lambda s: int(s.split("-")[0]))
        allocation = allocate_equally({str(s): int(available[s]) for s in order}, n_items)
    sample = stratified_sample(eligible, "stratum", allocation, seed, "argument_id")
    return sample.assign(study="pairwise")[ITEM_COLUMNS]


def design_pairs(items: pd.DataFrame, method: str, within: int, between: int, n_pairs: int, seed: int) -> pd.DataFrame:
    """Pairs of the pairwise items: ``bins`` (within/between deciles), ``random`` or ``adaptive``
    (round 0 of :func:`~argassets.platform.design.adaptive.plan_round` over every pair)."""
    ids, bins = items["argument_id"].tolist(), items["bin_index"].tolist()
    if method == "bins":
        pairs = strata_pairs(ids, bins, within, between, seed)
    elif method == "random":
        pairs = random_pairs(ids, n_pairs, seed)
    elif method == "adaptive":
        all_pairs = random_pairs(ids, len(ids) * (len(ids) - 1) // 2, seed)
        candidates = pd.DataFrame(
            {
                "pair_id": np.arange(len(all_pairs)),
                "group": 0,
                "item_a": all_pairs["item_1"],
                "item_b": all_pairs["item_2"],
            }
        )
        share = min(1.0, n_pairs / len(candidates))
        plan = plan_round(
            candidates,
            pd.DataFrame(columns=["pair_id", "round", "label"]),
            AdaptiveSettings(first_round=share, seed=seed),
        )
        pairs = all_pairs.iloc[list(plan.pair_ids)].assign(kind="adaptive-round-0").reset_index(drop=True)
    else:
        raise ValueError(f"pair method must be 'bins', 'random' or 'adaptive', got {method!r}")
    stratum = dict(zip(ids, bins, strict=True))
    return pairs.assign(stratum_1=pairs["item_1"].map(stratum), stratum_2=pairs["item_2"].map(stratum))


def pointwise_gold(study: PointwiseStudy, exclude: set[str], count: int, seed: int) -> pd.DataFrame:
    """``count`` gold tasks: published items labelled alike by all three annotators."""
    items = study.items
    unanimous = items[
        (items[["a1_label", "a2_label", "a3_label"]].nunique(axis=1) == 1) & ~items["meta_id"].isin(exclude)
    ]
    chosen = unanimous.iloc[np.random.default_rng(seed).permutation(len(unanimous))[:count]]
    return pd.DataFrame(
        {
            "task_id": [task_id(POLITICAL.name, f"gold-{m}") for m in chosen["meta_id"]],
            "kind": GOLD,
            "question": POLITICAL.name,
            "item_1": [f"gold-{m}" for m in chosen["meta_id"]],
            "item_2": None,
            "text_1": [argument_text(p, loc) for p, loc in zip(chosen["proposition"], chosen["locution"], strict=True)],
            "text_2": None,
            "expected_label": chosen["a1_label"].astype(str).to_numpy(),
        },
        columns=TASK_COLUMNS,
    )


def pairwise_gold(study: PairwiseStudy, exclude: set[str], count: int, seed: int) -> pd.DataFrame:
    """``count`` gold pairs per framing: published pairs at least 5 of 6 annotators ordered alike."""
    index = {m: i for i, m in enumerate(study.items["meta_id"])}
    human = human_win_matrices(len(index), index, study.votes)["human"]
    first = (
        np.array([human[index[a], index[b]] for a, b in zip(study.pairs["id1"], study.pairs["id2"], strict=True)]) / 6.0
    )
    clear = (
        (np.abs(first - 0.5) >= 1 / 3 - 1e-9)
        & ~study.pairs["id1"].isin(exclude).to_numpy()
        & ~study.pairs["id2"].isin(exclude).to_numpy()
    )
    chosen = np.flatnonzero(clear)[np.random.default_rng(seed).permutation(int(clear.sum()))[:count]]
    text = {
        m: argument_text(p, loc)
        for m, p, loc in zip(study.items["meta_id"], study.items["proposition"], study.items["locution"], strict=True)
    }
    rows = []
    for k in chosen:
        a, b = study.pairs["id1"].iat[k], study.pairs["id2"].iat[k]
        right_first = first[k] > 0.5
        for question, answer in ((RIGHT, "1" if right_first else "2"), (LEFT, "2" if right_first else "1")):
            rows.append(
                (
                    task_id(question.name, f"gold-{a}", f"gold-{b}"),
                    GOLD,
                    question.name,
                    f"gold-{a}",
                    f"gold-{b}",
                    text[a],
                    text[b],
                    answer,
                )
            )
    return pd.DataFrame(rows, columns=TASK_COLUMNS)


def pilot_pool(study: PairwiseStudy) -> AnnotatorPool:
    """Simulated annotators like the published ones: the spread of their BT strengths net of the
    estimation error, and their share of "equal" answers."""
    index = {m: i for i, m in enumerate(study.items["meta_id"])}
    wins = human_win_matrices(len(index), index, study.votes)["human"]
    return pool_from_pilot(bt_strengths(wins), wins, float((study.votes["label"] == 0).mean()))


def pilot_label_counts(study: PointwiseStudy) -> np.ndarray:
    """How many of its three published labels said "political", per item."""
    return study.items[["a1_label", "a2_label", "a3_label"]].sum(axis=1).to_numpy(dtype=np.int64)
