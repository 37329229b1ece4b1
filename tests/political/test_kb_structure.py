"""The KB analysis on small synthetic knowledge bases with known answers (no services, no data)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from argassets.political.structure import (
    acceptability,
    ambiguity,
    debates,
    distance,
    facets,
    findings,
    intervals,
    positions,
)
from argassets.political.structure.intervals import cluster_weights, grouped_means, replicate_interval


def _arguments(rows: list[tuple[str, str, str, str]]) -> pd.DataFrame:
    """``(argument_id, episode, speaker, force)`` rows as a KB arguments table."""
    frame = pd.DataFrame(rows, columns=["argument_id", "episode", "speaker", "force"])
    frame["i_node_id"] = "I" + frame["argument_id"]
    return frame


def _positions(values: dict[str, float], system: str = "m1", kind: str = "model", prob_na: float = 0.0) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "system": system,
            "kind": kind,
            "argument_id": list(values),
            "position": list(values.values()),
            "std": 1.0,
            "prob_na": prob_na,
            "n_scores": 5,
        }
    )


def test_pair_null_is_the_mean_over_every_pair():
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 100, size=40)
    pairs = list(itertools.combinations(x, 2))
    mean_abs, crossing = distance.pair_null(np.append(x, np.nan))
    assert mean_abs == pytest.approx(np.mean([abs(a - b) for a, b in pairs]), rel=1e-12)
    expected = np.mean([(min(a, b) < 45) and (max(a, b) > 55) for a, b in pairs])
    assert crossing == pytest.approx(expected, rel=1e-12)
    assert np.isnan(distance.pair_null(np.array([5.0]))[0])


def test_grouped_means_and_intervals():
    values = np.array([1.0, 3.0, 10.0, np.nan, 20.0, 30.0])
    groups = np.array([0, 0, 1, 1, 1, 0])
    clusters = np.array([0, 1, 0, 1, 1, 2])
    weights = cluster_weights(3, n_boot=400, seed=1)
    boot = grouped_means(values, groups, 2, clusters, weights)
    assert boot.estimate.tolist() == pytest.approx([34.0 / 3, 15.0])
    assert boot.count.tolist() == [3, 2]
    # one replicate by hand: cluster counts (2, 0, 1) weight cluster 0 twice
    one = grouped_means(values, groups, 2, clusters, np.array([[2.0, 0.0, 1.0]]))
    assert one.replicates[0].tolist() == pytest.approx([(2 * 1 + 30) / 3, 10.0])
    low, high = boot.interval()
    assert (low <= boot.estimate).all() and (boot.estimate <= high).all()
    reps = np.random.default_rng(2).normal(size=(500, 3))
    reps[:100, 1] = np.nan
    low, high = replicate_interval(reps)
    expected = np.array([np.nanpercentile(reps[:, j], [2.5, 97.5]) for j in range(3)])
    assert np.allclose(np.c_[low, high], expected)
    with pytest.raises(ValueError, match="no clusters"):
        cluster_weights(0)


def test_speaker_roles_follow_the_labels():
    rows = []
    for d in range(4):
        episode = f"2021-01-0{d + 1}"
        rows += [(f"c{d}{i}", episode, "Fiona Bruce", "Asserting") for i in range(3)]
        rows += [(f"p{d}{i}", episode, f"Panel {d}", "Asserting") for i in range(20)]
        rows += [(f"a{d}", episode, "Female Aud 2", "Asserting")]
        rows += [(f"b{d}", episode, f"AudienceMember 2021010{d}QT01", "Asserting")]
        rows += [(f"u{d}", episode, "Steve Unkown", "Asserting"), (f"e{d}", episode, "", "Asserting")]
        if d < 2:  # quoted in half of the debates: not the chair
            rows += [(f"q{d}", episode, "Boris Johnson", "Asserting")]
    frame = _arguments(rows)
    roles = dict(zip(frame["argument_id"], facets.speaker_roles(frame, min_panel=20), strict=True))
    assert roles["c00"] == "chair" and roles["p30"] == "panellist"
    assert roles["a1"] == roles["b2"] == "audience"
    assert roles["u0"] == roles["e3"] == "unknown"
    assert roles["q1"] == "other named"
    # a speaker in exactly half of the debates is no chair
    half = _arguments([(f"x{d}", f"2021-01-0{d}", "Host" if d < 2 else "Other", "Asserting") for d in range(4)])
    assert set(facets.speaker_roles(half, min_panel=1)) == {"panellist"}


def test_transition_depths_count_steps_from_the_start():
    frame = _arguments([(a, "2021-01-01", "S", "Asserting") for a in "abcdefgh"])
    ta = [("a", "b"), ("b", "c"), ("a", "d"), ("d", "c"), ("f", "g"), ("g", "f")]
    relations = pd.DataFrame(
        [(s, t, "TRANSITIONS_TO") for s, t in ta] + [("a", "h", "SUPPORTS")],
        columns=["source_id", "target_id", "relation"],
    )
    depth = dict(zip(frame["argument_id"], facets.transition_depths(frame, relations), strict=True))
    assert depth == {"a": 0, "b": 1, "c": 2, "d": 1, "e": -1, "f": -2, "g": -2, "h": -1}
    assert [facets.depth_bin(d) for d in (0, 2, 4, 15, 40, -1, -2)] == [
        "0",
        "1-2",
        "3-5",
        "11-20",
        "21+",
        facets.NO_TRANSITION,
        facets.IN_CYCLE,
    ]
    bad = pd.DataFrame([("a", "zz", "TRANSITIONS_TO")], columns=["source_id", "target_id", "relation"])
    with pytest.raises(ValueError, match="a -> zz"):
        facets.transition_depths(frame, bad)


def test_acceptability_status_reads_the_grounded_extension():
    frame = _arguments([(a, "2021-01-01", "S", "Asserting") for a in "xyz"])
    dung = pd.DataFrame({"dung_id": ["A1", "A2", "A3"], "conclusion": ["Ix", "Iy", "Iz"]})
    # A1 undermines A2, A2 rebuts A3: A1 in, A2 out, A3 in (defended by A1)
    defeats = pd.DataFrame(
        {
            "attacker": ["A1", "A2"],
            "attacked": ["A2", "A3"],
            "attack_type": ["undermine", "rebut"],
            "target_conclusion": ["Iy", "Iz"],
        }
    )
    status = facets.acceptability_status(frame, dung, defeats)
    assert status["justified"].tolist() == [True, False, True]
    assert status["undermined"].tolist() == [False, True, False]
    assert status["rebutted"].tolist() == [False, False, True]


def _two_debate_kb() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Two debates; supports join arguments 2 apart, attacks join 30 and 70 (always crossing)."""
    rows, values, relations = [], {}, []
    for d, episode in enumerate(["2021-01-01", "2021-02-01"]):
        for k in range(10):
            s, t, u, v = (f"{episode}-{k}-{x}" for x in "stuv")
            rows += [(a, episode, f"S{k % 3}", "Asserting") for a in (s, t, u, v)]
            values.update({s: 40.0 + d, t: 42.0 + d, u: 30.0, v: 70.0})
            relations += [(s, t, "SUPPORTS"), (u, v, "ATTACKS"), (v, u, "ATTACKS")]
    frame = _arguments(rows)
    table = facets.argument_facets(
        frame,
        pd.DataFrame(relations, columns=["source_id", "target_id", "relation"]),
        pd.DataFrame({"dung_id": [], "conclusion": []}),
        pd.DataFrame({"attacker": [], "attacked": [], "attack_type": [], "target_conclusion": []}),
    )
    return _positions(values), pd.DataFrame(relations, columns=["source_id", "target_id", "relation"]), table


def test_relation_distances_on_a_known_kb():
    pos, relations, table = _two_debate_kb()
    flat = _positions(dict.fromkeys(pos["argument_id"], 50.0), system="flat")
    na = _positions(dict(zip(pos["argument_id"], pos["position"], strict=True)), system="apolitical", prob_na=0.8)
    frame, robust = distance.relation_distances(pd.concat([pos, flat, na]), relations, table, n_boot=200)
    m1 = frame[(frame["system"] == "m1") & (frame["source_side"] == "all")].set_index("relation")
    assert m1.at["SUPPORTS", "pairs"] == 20 and m1.at["ATTACKS", "pairs"] == 40
    assert m1.at["SUPPORTS", "mean_abs_diff"] == pytest.approx(2.0)
    assert m1.at["ATTACKS", "mean_abs_diff"] == pytest.approx(40.0)
    assert m1.at["ATTACKS", "crossing_share"] == 1.0 and m1.at["SUPPORTS", "crossing_share"] == 0.0
    assert m1.at["ATTACKS", "mean_signed_diff"] == pytest.approx(0.0)  # both directions
    assert m1.at["SUPPORTS", "mean_abs_diff_low"] == pytest.approx(2.0)
    assert m1.at["ATTACKS", "ratio_to_null"] > 1 > m1.at["SUPPORTS", "ratio_to_null"]
    # the null of a pair is the mean over the pairs of its debate (exact)
    first = pos[pos["argument_id"].str.startswith("2021-01-01")]["position"].to_numpy()
    second = pos[pos["argument_id"].str.startswith("2021-02-01")]["position"].to_numpy()
    expected = (distance.pair_null(first)[0] + distance.pair_null(second)[0]) / 2
    assert m1.at["SUPPORTS", "null_mean_abs_diff"] == pytest.approx(expected)
    assert m1.at["SUPPORTS", "random_pair_mean_abs_diff"] == pytest.approx(
        distance.pair_null(pos["position"].to_numpy())[0]
    )
    left = frame[(frame["system"] == "m1") & (frame["relation"] == "ATTACKS") & (frame["source_side"] == "from left")]
    assert left["pairs"].item() == 20 and left["mean_signed_diff"].item() == pytest.approx(40.0)
    assert (frame.loc[frame["system"] == "flat", "mean_abs_diff"].dropna() == 0).all()
    assert (frame.loc[frame["system"] == "apolitical", "pairs"] == 0).all()
    by = robust.set_index("system")
    assert by.at["m1", "difference"] == pytest.approx(38.0)
    assert by.at["flat", "difference"] == 0.0
    summary = distance.robustness_summary(robust)
    assert summary["systems"] == 3 and summary["attacks_farther"] == 1 and summary["interval_above_zero"] == 1


def test_relation_distances_reject_unknown_ends_and_types():
    pos, relations, table = _two_debate_kb()
    with pytest.raises(ValueError, match="nowhere"):
        stray = pd.DataFrame([["nowhere", relations.iat[0, 1], "ATTACKS"]], columns=relations.columns)
        distance.relation_distances(pos, pd.concat([relations, stray]), table)
    odd = relations.assign(relation="QUOTES")
    with pytest.raises(ValueError, match="QUOTES"):
        distance.relation_distances(pos, odd, table)


def test_ambiguity_debates_and_acceptability_on_a_known_kb():
    pos, relations, table = _two_debate_kb()
    pos = pos.assign(prob_na=np.where(pos["argument_id"].str.endswith("-s"), 0.5, 0.0))
    other = pos.assign(system="m2", position=pos["position"] + 10)
    both = pd.concat([pos, other], ignore_index=True)
    amb = ambiguity.ambiguity_by_facet(both, table, n_boot=100)
    force = amb[(amb["system"] == "m1") & (amb["facet"] == "force")].iloc[0]
    assert force["arguments"] == 80 and force["ambiguous_share"] == pytest.approx(0.25)
    assert force["prob_na"] == pytest.approx(0.125) and force["spread"] == pytest.approx(1.0)
    across = amb[(amb["system"] == positions.ACROSS_MODELS) & (amb["facet"] == "force")].iloc[0]
    assert across["spread"] == pytest.approx(5.0)  # two models 10 apart: std 5
    per_debate = debates.debate_positions(both, table, n_boot=100)
    first = per_debate[(per_debate["system"] == "m1") & (per_debate["episode"] == "2021-01-01")].iloc[0]
    # political arguments (P(NA) < 0.5): t (42), u (30), v (70) of each group of four
    assert first["political"] == 30 and first["position"] == pytest.approx((42 + 30 + 70) / 3)
    assert first["prob_na"] == pytest.approx(0.125)
    marked = table.assign(justified=table["argument_id"].str.endswith("-u"))
    acc = acceptability.acceptability_differences(pos, marked, n_boot=100).set_index(["status", "measure"])
    # justified: the u arguments (30); the rest of the political ones: t (42, 43 by debate) and v (70)
    assert acc.at[("justified", "position"), "difference"] == pytest.approx(30 - (10 * 42 + 10 * 43 + 20 * 70) / 40)
    assert acc.at[("justified", "extremity"), "with"] == pytest.approx(20.0)
    assert acc.at[("justified", "position"), "with_n"] == 20


def test_the_readme_section_is_replaced_between_its_markers():
    text = f"intro\n{findings.BEGIN_MARKER}\nold figures\n{findings.END_MARKER}\nrest\n"
    updated = findings.replace_section(text, "new figures\n")
    assert findings.read_section(updated) == "new figures"
    assert updated.startswith("intro\n") and updated.endswith(f"{findings.END_MARKER}\nrest\n")
    with pytest.raises(ValueError, match="markers"):
        findings.read_section("no markers here")


def test_speakers_are_resampled_within_their_debate():
    table = pd.DataFrame(
        {
            "episode": ["d1"] * 5 + ["d2"] * 3,
            "speaker": ["a", "a", "b", "c", "d", "a", "e", "e"],
        }
    )
    clusters, weights = intervals.speaker_clusters(table, n_boot=300, seed=4)
    # speaker a in d1 and in d2 are two clusters; rows of one speaker in one debate share one
    assert clusters.tolist() == [0, 0, 1, 2, 3, 4, 5, 5]
    assert weights.shape == (300, 6)
    assert (weights[:, :4].sum(axis=1) == 4).all() and (weights[:, 4:].sum(axis=1) == 2).all()
    assert weights[:, 0].std() > 0
    with pytest.raises(ValueError, match="strata"):
        cluster_weights(3, strata=np.array([0, 1]))
