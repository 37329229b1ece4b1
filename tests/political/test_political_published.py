"""The published data: per-model TSV files, the study files, text matching, and the published rows."""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest

from argassets.political import published
from argassets.political.human_studies import read_pairwise_study, read_pointwise_study
from argassets.political.published import PUBLISHED_TSV_STUDY_PREFIX, published_tsv_to_predictions, read_published_tsv
from argassets.political.study_items import match_study_items, normalise_text
from argassets.political.validation.design import graph_components
from argassets.political.validation.evaluation import (
    PairwiseDesign,
    evaluate_pairwise,
    evaluate_pointwise,
    interannotator_agreement,
)
from argassets.political.validation.win_matrices import decile_bins


@pytest.fixture(scope="module")
def human_dir(shared_data_dir):
    return shared_data_dir / "political" / "human"


@pytest.fixture(scope="module")
def pairwise(human_dir):
    return read_pairwise_study(human_dir)


@pytest.fixture(scope="module")
def pointwise(human_dir):
    return read_pointwise_study(human_dir)


def test_read_published_tsv_with_spaced_header(shared_data_dir):
    frame = read_published_tsv(shared_data_dir / "political/predictions/gpt4o.tsv")
    assert len(frame) == 23300
    assert frame["node_id"].tolist() == list(range(23300))
    first = frame.iloc[0]
    assert first["scores"] == [] and first["na_count"] == 5 and first["prob_na"] == 1.0 and np.isnan(first["mean"])


def test_published_node_ids_are_the_pairwise_prediction_index(shared_data_dir, pairwise):
    """nodeID = prediction_index: every file reproduces the sample's arrays and NA counts."""
    for stem, prefix in PUBLISHED_TSV_STUDY_PREFIX.items():
        frame = read_published_tsv(shared_data_dir / f"political/predictions/{stem}.tsv").set_index("node_id")
        sample = pairwise.published[pairwise.published["prefix"] == prefix].set_index("meta_id")
        for meta_id, index in zip(pairwise.items["meta_id"], pairwise.items["prediction_index"], strict=True):
            assert frame.loc[index, "scores"] == sample.loc[meta_id, "scores"], (stem, meta_id)
            assert frame.loc[index, "na_count"] == sample.loc[meta_id, "na_count"], (stem, meta_id)


def test_published_tsv_errors_name_file_and_line(tmp_path):
    path = tmp_path / "bad.tsv"
    header = "nodeID \t array_of_pol_pos \t mean \t var \t std \t NA_count \t prob_of_NA \n"
    path.write_text(
        header + "0 \t [50, 40] \t 45.0 \t 25.0 \t 5.0 \t 3 \t 0.6\n1 \t [50, oops] \t 1 \t 1 \t 1 \t 0 \t 0.0\n"
    )
    with pytest.raises(ValueError, match=r"bad.tsv: line 3: not a JSON list"):
        read_published_tsv(path)
    path.write_text(header + "0 \t [] \t nan \t nan \t nan \t 5 \t 1.0\n0 \t [] \t nan \t nan \t nan \t 5 \t 1.0\n")
    with pytest.raises(ValueError, match=r"line 3: nodeID 0 occurs twice"):
        read_published_tsv(path)
    path.write_text("nodeID\tscores\n")
    with pytest.raises(ValueError, match=r"line 1: expected columns"):
        read_published_tsv(path)


@pytest.mark.parametrize("relative", ["predictions/gpt4o.tsv", "predictions/mistral_7b.tsv", "ensembles/ensemble3.tsv"])
def test_published_tsv_column_wise_reading_equals_line_by_line(shared_data_dir, relative):
    """The fast reader gives the line-by-line reader's frame, value for value (mistral_7b has -1s)."""
    path = shared_data_dir / "political" / relative
    lines = path.read_text(encoding="utf-8").splitlines()
    by_line = published.parse_rows_by_line(path, lines[1:]).sort_values("node_id").reset_index(drop=True)
    frame = read_published_tsv(path, expected_node_ids=None)
    pd.testing.assert_frame_equal(frame, by_line, check_exact=True)
    assert [type(v) for row in frame["scores"] for v in row] == [type(v) for row in by_line["scores"] for v in row]


def test_published_tsv_lines_the_column_wise_reader_declines_are_read_line_by_line(tmp_path):
    """Valid lines the column-wise reader does not take (a signed nodeID, 'NaN', a space-only line)
    are read by the line-by-line reader, to the same values Python's int, float and json give."""
    header = "nodeID \t array_of_pol_pos \t mean \t var \t std \t NA_count \t prob_of_NA \n"
    plain = "1 \t [ ] \t nan \t nan \t nan \t 5 \t 1.0\n0 \t [50,40] \t 45. \t 25.0 \t 5.0 \t 3 \t 0.6\n\n"
    path = tmp_path / "plain.tsv"
    path.write_text(header + plain)
    frame = read_published_tsv(path, expected_node_ids=range(2))
    assert published.parse_rows_columnwise(path.read_text().splitlines()[1:]) is not None
    assert frame["scores"].tolist() == [[50, 40], []] and frame["mean"].iloc[0] == 45.0
    odd = path.with_name("odd.tsv")
    odd.write_text(header + plain + "   \n+2 \t [7] \t NaN \t 1e-1 \t inf \t 0 \t 0.0\n")
    assert published.parse_rows_columnwise(odd.read_text().splitlines()[1:]) is None
    frame = read_published_tsv(odd, expected_node_ids=range(3))
    assert frame["node_id"].tolist() == [0, 1, 2] and frame["scores"].tolist() == [[50, 40], [], [7]]
    assert np.isnan(frame["mean"].iloc[2]) and frame["var"].iloc[2] == 0.1 and np.isinf(frame["std"].iloc[2])
    assert frame.dtypes.to_dict() == read_published_tsv(path, expected_node_ids=range(2)).dtypes.to_dict()


def test_published_tsv_expansion_of_every_kind_of_answer():
    """Scores in and out of 0-100, NAs and missing repetitions, row by row, keyed by KB argument."""
    published_rows = pd.DataFrame({"node_id": [3, 9], "scores": [[101, 5], []], "na_count": [1, 0]})
    rows = pd.DataFrame({"argument_id": ["kb-b", "kb-a", "kb-c"], "published_index": [9, 3, 3]})
    expanded = published_tsv_to_predictions(published_rows, "m", 5, argument_rows=rows)
    assert expanded["argument_id"].tolist() == ["kb-b"] * 5 + ["kb-a"] * 5 + ["kb-c"] * 5
    assert expanded["published_index"].tolist() == [9] * 5 + [3] * 10
    assert expanded["repetition"].tolist() == list(range(5)) * 3
    assert expanded["raw_output"].tolist() == [""] * 5 + ["101", "5", "NA", "", ""] * 2
    assert expanded["is_valid"].tolist() == [False] * 5 + [False, True, True, False, False] * 2
    assert expanded["is_na"].tolist() == [False] * 5 + [False, False, True, False, False] * 2
    assert expanded["score"].iloc[6] == 5.0 and expanded["score"].drop(index=[6, 11]).isna().all()
    assert str(expanded["published_index"].dtype) == "Int64" and expanded["judge_model"].eq("m").all()


def test_published_tsv_expands_to_repetitions_and_keeps_out_of_range_values_as_invalid(shared_data_dir):
    frame = read_published_tsv(shared_data_dir / "political/predictions/mistral_7b.tsv")
    predictions = published_tsv_to_predictions(frame, "published-mistral-7b")
    assert len(predictions) == 5 * len(frame)
    negative = predictions[predictions["raw_output"] == "-1"]
    assert len(negative) > 0
    assert (~negative["is_valid"]).all() and negative["score"].isna().all() and (~negative["is_na"]).all()
    valid = predictions[predictions["is_valid"] & ~predictions["is_na"]]
    assert valid["score"].between(0, 100).all()
    assert predictions["argument_id"].iloc[0] == "paper:0" and predictions["published_index"].iloc[0] == 0
    short = pd.DataFrame({"node_id": [7], "scores": [[10]], "na_count": [1]})
    expanded = published_tsv_to_predictions(short, "m")
    assert expanded["raw_output"].tolist() == ["10", "NA", "", "", ""]
    assert expanded["is_valid"].tolist() == [True, True, False, False, False]
    with pytest.raises(ValueError, match="nodeID 7 has 1 scores and 5 NA"):
        published_tsv_to_predictions(short.assign(na_count=5), "m")


def test_pairwise_study_shape_and_bins(pairwise):
    assert len(pairwise.items) == 100 and len(pairwise.pairs) == 934
    assert len(pairwise.votes) == 6 * 934
    assert len(pairwise.prefixes) == 25 and {"ensemble1", "ensemble2", "ensemble3", "o3_mini_2025_01_31"} <= set(
        pairwise.prefixes
    )
    # the study's bins are the decile rule applied to E3's mean score
    e3 = (
        pairwise.published[pairwise.published["prefix"] == "ensemble3"]
        .set_index("meta_id")
        .loc[pairwise.items["meta_id"]]
    )
    means = [np.mean(s) for s in e3["scores"]]
    np.testing.assert_array_equal(decile_bins(means), pairwise.items["bin_index"])
    assert pairwise.items["bin_index"].nunique() == 8


def test_pairwise_graph_is_connected(pairwise):
    index = {m: i for i, m in enumerate(pairwise.items["meta_id"])}
    pairs = np.array([(index[a], index[b]) for a, b in zip(pairwise.pairs["id1"], pairwise.pairs["id2"], strict=False)])
    count, _ = graph_components(100, pairs)
    assert count == 1


def test_pairwise_study_rejects_a_bad_vote(human_dir, tmp_path):
    for path in human_dir.glob("pairwise_*.csv"):
        shutil.copy(path, tmp_path / path.name)
    right = pd.read_csv(tmp_path / "pairwise_right_framed.csv")
    right.loc[5, "label"] = 7
    right.to_csv(tmp_path / "pairwise_right_framed.csv", index=False)
    # Data rows count from 1, the first row after the header, as Study A's errors count them.
    data_rows = (tmp_path / "pairwise_right_framed.csv").read_text().splitlines()[1:]
    assert data_rows[6 - 1].split(",")[list(right.columns).index("label")] == "7"
    with pytest.raises(ValueError, match=r"pairwise_right_framed.csv: data row 6: label 7"):
        read_pairwise_study(tmp_path)
    right.loc[5, "label"] = 1
    right.drop(index=7).to_csv(tmp_path / "pairwise_right_framed.csv", index=False)
    with pytest.raises(ValueError, match=r"has 2 votes, expected 3"):
        read_pairwise_study(tmp_path)


def test_pointwise_study(pointwise, human_dir, tmp_path):
    assert len(pointwise.items) == 1000
    assert pointwise.items["n_type"].value_counts().to_dict() == {"high": 400, "low": 400, "mid": 200}
    assert len(pointwise.prefixes) == 25
    assert pointwise.items["proposition"].notna().all()
    for path in human_dir.glob("pointwise_*.csv"):
        shutil.copy(path, tmp_path / path.name)
    merged = pd.read_csv(tmp_path / "pointwise_results_merged.csv")
    merged.loc[3, "judgements_maj"] = 1 - merged.loc[3, "judgements_maj"]
    merged.to_csv(tmp_path / "pointwise_results_merged.csv", index=False)
    with pytest.raises(ValueError, match=rf"item '{merged.loc[3, 'meta_id']}': judgements_maj disagrees"):
        read_pointwise_study(tmp_path)


def test_normalise_text():
    assert normalise_text("Don\u2019t  say \u201cno\u201d\u2026") == normalise_text('don\'t say "no"...')
    assert normalise_text("a \u2013 b") == "a - b"
    assert normalise_text(None) == ""


def test_match_study_items_tiers():
    kb = pd.DataFrame(
        {
            "argument_id": ["k1", "k2", "k3", "k4", "k0"],
            "locution": ['We said "no"', "Alpha", "Beta loc", "same", 'We said "no"'],
            "proposition": ["they said no", "alpha prop", "beta prop", "dup prop", "they said no"],
        }
    )
    pairwise_items = pd.DataFrame(
        {
            "meta_id": ["p1", "p2"],
            "locution": ["Kofie Unknown  : we said 'no'", "nothing like it"],
            "proposition": ["They said no", "nor this"],
            "speaker": ["Kofie Unknown", "X"],
            "prediction_index": [11, 12],
        }
    )
    pointwise_items = pd.DataFrame(
        {
            "meta_id": ["q1", "q2", "q3"],
            "locution": ["Alpha", "other words", "Beta  loc"],
            "proposition": ["alpha prop", "BETA PROP", "changed"],
        }
    )
    matches = match_study_items(kb, pointwise_items, pairwise_items).set_index("meta_id")
    assert matches.loc["p1", ["argument_id", "match", "n_candidates"]].tolist() == ["k0", "normalised", 2]
    assert matches.loc["p1", "published_index"] == 11
    assert matches.loc["p2", "match"] == "unmatched" and pd.isna(matches.loc["p2", "argument_id"])
    assert matches.loc["q1", ["argument_id", "match"]].tolist() == ["k2", "exact"]
    assert matches.loc["q2", ["argument_id", "match"]].tolist() == ["k3", "proposition"]
    assert matches.loc["q3", ["argument_id", "match"]].tolist() == ["k3", "locution"]


@pytest.fixture(scope="module")
def published_pairwise(pairwise):
    meta = list(pairwise.items["meta_id"])
    arrays = {p: g.set_index("meta_id").loc[meta, "scores"].tolist() for p, g in pairwise.published.groupby("prefix")}
    design = PairwiseDesign.build(meta, pairwise.pairs, pairwise.votes, arrays["ensemble3"])
    keep = ["ensemble3", "llama3_2_3b", "o3_mini_2025_01_31"]
    report = evaluate_pairwise(design, {f"published:{p}": ("published", arrays[p]) for p in keep})
    return design, report.set_index(["system", "subset"])


def test_published_e3_agrees_with_humans_far_above_chance(published_pairwise):
    design, report = published_pairwise
    assert sum(int(design.subsets[s].sum()) for s in ("P11", "P10", "P01", "P00")) == 934
    e3 = report.loc[("published:ensemble3", "all")]
    random = report.loc[("baseline:all-equal", "all")]  # no information: every pair tied
    assert e3["n_pairs"] == 934
    assert e3["alpha_ordinal"] > 0.6 and e3["d_footrule"] > 0.65 and e3["d_tau"] > 0.75
    assert random["d_footrule"] == pytest.approx(0.5) and random["d_tau"] == pytest.approx(0.5)
    assert abs(random["alpha_ordinal"]) < 0.05
    worst = report.loc[("baseline:worst", "all")]
    assert worst["d_footrule"] == pytest.approx(0.0) and worst["d_tau"] == pytest.approx(0.0)
    # every framing agrees with the aggregate more than any model does
    for framing in ("human:left", "human:right"):
        assert report.loc[(framing, "all"), "alpha_ordinal"] > e3["alpha_ordinal"]
    # the small model that never answers NA is worse than the ensemble
    assert report.loc[("published:llama3_2_3b", "all"), "alpha_ordinal"] < e3["alpha_ordinal"] - 0.3


def test_interannotator_agreement(published_pairwise, pairwise):
    design, _ = published_pairwise
    table = interannotator_agreement(design, pairwise.votes)
    alpha = table[(table["statistic"] == "alpha_ordinal_left_vs_right") & (table["subset"] == "all")]["value"].iloc[0]
    assert 0.7 < alpha < 1.0
    shares = table[table["statistic"] == "share_of_pairs"]
    assert shares.groupby("framing")["value"].sum().round(12).tolist() == [1.0, 1.0]
    assert shares.groupby("framing")["n_pairs"].sum().tolist() == [934, 934]


def test_published_pointwise_rows(pointwise):
    systems = {
        f"published:{p}": ("published", g.set_index("meta_id").loc[pointwise.items["meta_id"], "prob_na"].to_numpy())
        for p, g in pointwise.published.groupby("prefix")
    }
    report = evaluate_pointwise(pointwise.items, systems, {"published": [s for s in systems if "ensemble" not in s]})
    indexed = report.set_index(["system", "partition"])
    assert indexed.loc[("published:ensemble3", "full"), "n"] == 1000
    assert indexed.loc[("published:ensemble3", "confident"), "n"] == 800
    assert indexed.loc[("published:ensemble3", "ambiguous"), "n"] == 200
    assert (
        indexed.loc[("published:ensemble3", "confident"), "macro_f1"]
        > indexed.loc[("published:ensemble3", "ambiguous"), "macro_f1"]
    )
    # a model that never says NA calls everything political: recall 1, balanced accuracy 0.5
    assert indexed.loc[("published:llama3_2_3b", "full"), "recall"] == 1.0
    assert indexed.loc[("published:llama3_2_3b", "full"), "balanced_accuracy"] == pytest.approx(0.5)
    human = indexed.loc[("human:inter-annotator", "full"), "alpha_nominal"]
    assert 0.1 < human < 0.6
    for row in ("inter-model:published", "inter-model:published:threshold", "human-model:published"):
        assert (row, "ambiguous") in indexed.index


def test_the_out_of_range_warning_says_how_many_where_and_which(shared_data_dir):
    from argassets.political.predictions import out_of_range_warning, published_prediction_table

    path = shared_data_dir / "political/predictions/mistral_7b.tsv"
    predictions = published_prediction_table(published_tsv_to_predictions(read_published_tsv(path), "m"), "full")
    out = predictions[predictions["raw_output"].isin(["-1"])]
    line = out_of_range_warning("published-mistral-7b", path, predictions)
    assert line.startswith(f"published-mistral-7b: {len(out)} published score(s) outside 0-100 in {path}")
    assert f"{out['argument_id'].iloc[0]} = -1" in line and "\n" not in line
