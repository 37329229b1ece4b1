"""The Study A paper's published tables, their rows in the reports, the metric bootstrap and the
reproduction verdicts: real published files, synthetic data with known answers, error paths."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from argassets.argument_quality.published import (
    PUBLISHED_FILES,
    PUBLISHED_METRICS,
    published_grid_problems,
    published_model_names,
    published_report_rows,
    published_rows_problems,
    read_published_table,
)
from argassets.argument_quality.published_reproduction import reproduction_summary, reproduction_table, with_published
from argassets.platform.registry.entries import load_registry

METRICS = list(PUBLISHED_METRICS.values())


@pytest.fixture(scope="module")
def tables(shared_data_dir):
    return {name: read_published_table(shared_data_dir / path) for name, path in PUBLISHED_FILES.items()}


def test_published_tables_are_read_exactly(tables):
    experts, best = tables["experts"], tables["best"]
    assert len(experts) == len(best) == 108
    assert experts["paper_model"].nunique() == 12
    assert published_grid_problems(experts).empty and published_grid_problems(best).empty
    row = experts[
        (experts["paper_model"] == "llama-70B-big") & (experts["dimension"] == "logic") & (experts["strategy"] == "few")
    ]
    assert row[METRICS].iloc[0].tolist() == [0.474, 0.479, 0.329, 0.806, 1.026, 0.493, 53.003]
    first = experts.iloc[0]
    assert (first["paper_model"], first["dimension"], first["strategy"], first["pearson"]) == (
        "mistral-7B-small",
        "logic",
        "zero",
        0.209,
    )
    itself = best[(best["paper_model"] == "llama-70B-big") & (best["strategy"] == "few")]
    assert (itself["pearson"] == 1.0).all() and (itself["percent_agreement"] == 100.0).all()


def test_every_paper_model_maps_to_one_registry_entry(tables):
    names = published_model_names(load_registry())
    assert set(names) == set(tables["experts"]["paper_model"])
    assert len(set(names.values())) == 12
    assert names["llama-70B-big"] == "llama-3.3-70b-instruct" and names["commandr-104B-big"] == "command-r-plus-08-2024"


def _write(tmp_path, text):
    path = tmp_path / "table.csv"
    path.write_text(text)
    return path


HEADER = "Model,Dim,Prompt,pearson,spearman,kendall,mae,rmse,cohen_kappa,%_agreement\n"


def test_published_table_errors_name_file_and_row(tmp_path):
    good = "m,logic,zero,0.1,0.1,0.1,1,1,0.1,40\n"
    with pytest.raises(
        ValueError,
        match=r"table.csv: data row 2: column 'Dim' must be one of logic, rhetoric, dialectic, got 'logical'",
    ):
        read_published_table(_write(tmp_path, HEADER + good + "m,logical,zero,0.1,0.1,0.1,1,1,0.1,40\n"))
    with pytest.raises(ValueError, match=r"data row 1: column 'Prompt' must be one of zero, few, cot"):
        read_published_table(_write(tmp_path, HEADER + "m,logic,one,0.1,0.1,0.1,1,1,0.1,40\n"))
    with pytest.raises(ValueError, match=r"data row 2: column 'kendall' must be a number, got 'n/a'"):
        read_published_table(_write(tmp_path, HEADER + good + "m,logic,few,0.1,0.1,n/a,1,1,0.1,40\n"))
    with pytest.raises(ValueError, match=r"data row 2: configuration \(m, logic, zero\) given twice"):
        read_published_table(_write(tmp_path, HEADER + good + good))
    with pytest.raises(ValueError, match=r"missing column\(s\) %_agreement"):
        read_published_table(
            _write(tmp_path, HEADER.replace(",%_agreement", "") + "m,logic,zero,0.1,0.1,0.1,1,1,0.1\n")
        )
    with pytest.raises(ValueError, match="data row 1: column 'Model' is empty"):
        read_published_table(_write(tmp_path, HEADER + ",logic,zero,0.1,0.1,0.1,1,1,0.1,40\n"))
    with pytest.raises(ValueError, match="no data rows"):
        read_published_table(_write(tmp_path, HEADER))
    with pytest.raises(ValueError, match="published table not found"):
        read_published_table(tmp_path / "absent.csv")
    # A complete grid needs 9 rows per model; an impossible value is out of range.
    table = read_published_table(_write(tmp_path, HEADER + "m,logic,zero,1.5,0.1,0.1,1,1,0.1,40\n"))
    problems = published_grid_problems(table)
    assert (problems["problem"] == "missing").sum() == 8
    assert "metric out of range: pearson" in set(problems["problem"])


def test_published_report_rows_carry_the_values_and_the_table_1_means(tables):
    columns = [
        "model",
        "strategy",
        "dimension",
        "kind",
        *METRICS,
        "krippendorff_alpha",
        "n_items",
        "best_set",
        "interval_method",
        "scope",
        "in_registry",
        "published_as",
    ]
    rows = published_report_rows(tables["experts"], columns, {"llama-70B-big": "llama-3.3-70b-instruct"})
    assert len(rows) == 108 + 36 and list(rows.columns) == columns
    assert set(rows["kind"]) == {"published"} and rows["model"].str.startswith("published:").all()
    assert rows["krippendorff_alpha"].isna().all() and rows["n_items"].isna().all() and not rows["best_set"].any()
    assert (rows["interval_method"] == "none: published aggregate (no per-item labels)").all()
    llama = rows[(rows["model"] == "published:llama-70B-big") & (rows["strategy"] == "few")].set_index("dimension")
    assert list(llama.index) == ["logic", "rhetoric", "dialectic", "mean"]
    assert llama.loc["mean", "pearson"] == pytest.approx((0.474 + 0.476 + 0.469) / 3, abs=1e-15)
    assert llama.loc["mean", "percent_agreement"] == pytest.approx((53.003 + 52.759 + 53.017) / 3, abs=1e-12)
    assert llama["in_registry"].all()
    assert not rows.loc[rows["published_as"] == "olmo2-7B-small", "in_registry"].any()


def test_published_rows_problems_catch_a_changed_a_missing_and_an_extra_row(tables):
    columns = ["model", "strategy", "dimension", "kind", *METRICS]
    rows = published_report_rows(tables["experts"], columns)
    assert published_rows_problems(rows, tables["experts"]).empty
    changed = rows.copy()
    changed.loc[0, "pearson"] += 0.001
    changed = changed.drop(index=5)
    extra = changed.iloc[:1].assign(model="published:ghost")
    changed = pd.concat([changed, extra, changed.iloc[1:2]], ignore_index=True)
    changed.loc[len(changed) - 1, "kendall"] = 1.7  # a duplicate, out of range
    problems = published_rows_problems(changed, tables["experts"])
    text = set(problems["problem"])
    assert "missing" in text and "not in the published table" in text and "given twice" in text
    changed_row = rows.iloc[0]
    assert any(p.startswith("pearson is ") and p.endswith(f"published {float(changed_row['pearson'])!r}") for p in text)
    assert "kendall out of range: 1.7" in text
    assert not published_rows_problems(rows.iloc[0:0], tables["experts"]).empty  # none at all: all missing


# --- Reproduction ------------------------------------------------------------------------------------


def _report(values: dict[str, float], dims=("logic", "rhetoric", "dialectic")) -> pd.DataFrame:
    rows = [{"model": "mine", "strategy": "few", "dimension": d, **values} for d in dims]
    rows.append({"model": "mine", "strategy": "few", "dimension": "mean", **values})
    rows.append({"model": "other", "strategy": "few", "dimension": "mean", **values})
    return pd.DataFrame(rows).assign(is_baseline=False, in_registry=True, krippendorff_alpha=0.3, n_items=10)


def _published() -> pd.DataFrame:
    rows = [
        {
            "paper_model": "paper-m",
            "strategy": "few",
            "dimension": d,
            **dict.fromkeys(METRICS, 0.5),
            "percent_agreement": 50.0,
        }
        for d in ("logic", "rhetoric", "dialectic")
    ]
    return pd.DataFrame(rows)


def _intervals(low: float, high: float, dims=("logic", "rhetoric", "dialectic", "mean")) -> pd.DataFrame:
    rows = [
        {
            "model": "mine",
            "strategy": "few",
            "dimension": d,
            "metric": m,
            "ci_low": low * (100 if m == "percent_agreement" else 1),
            "ci_high": high * (100 if m == "percent_agreement" else 1),
        }
        for d in dims
        for m in [*METRICS, "krippendorff_alpha"]
    ]
    return pd.DataFrame(rows)


def test_reproduction_deltas_and_verdicts():
    report = _report({**dict.fromkeys(METRICS, 0.52), "percent_agreement": 51.0})
    published = published_report_rows(_published(), ["published_as", "strategy", "dimension", *METRICS])
    inside = reproduction_table(report, published, {"mine": "paper-m"}, _intervals(0.45, 0.55))
    assert len(inside) == 4 * 7 and set(inside["model"]) == {"mine"}
    assert inside["delta"].to_numpy() == pytest.approx(np.tile([0.02] * 6 + [1.0], 4), abs=1e-12)
    assert set(inside["reproduced"]) == {"true"}
    outside = reproduction_table(report, published, {"mine": "paper-m"}, _intervals(0.51, 0.60))
    assert set(outside["reproduced"]) == {"false"}
    unknown = reproduction_table(report, published, {"mine": "paper-m"}, None)
    assert set(unknown["reproduced"]) == {"unknown"} and unknown["delta"].notna().all()
    summary = reproduction_summary(outside.assign(reproduced=np.where(outside["metric"] == "pearson", "false", "true")))
    assert set(summary["reproduced"]) == {"false"} and set(summary["metrics_reproduced"]) == {6}
    assert set(summary["metrics_compared"]) == {7} and summary["delta_pearson"].to_numpy() == pytest.approx([0.02] * 4)


def test_a_mean_row_is_not_compared_when_a_dimension_is_missing():
    report = _report(dict.fromkeys(METRICS, 0.5), dims=("logic",))
    published = published_report_rows(_published(), ["published_as", "strategy", "dimension", *METRICS])
    table = reproduction_table(report, published, {"mine": "paper-m"}, _intervals(0.4, 0.6))
    assert set(table.loc[table["dimension"] == "logic", "reproduced"]) == {"true"}
    mean = table[table["dimension"] == "mean"]
    assert set(mean["reproduced"]) == {"unknown"} and mean["published"].isna().all()


def test_with_published_adds_kind_the_reproduction_columns_and_the_paper_rows():
    report = _report(dict.fromkeys(METRICS, 0.5))
    out, reproduction = with_published(report, _published(), {"mine": "paper-m"}, _intervals(0.4, 0.6))
    measured = out[out["kind"] != "published"]
    assert set(measured["kind"]) == {"measured"}
    mine = measured[measured["model"] == "mine"]
    assert set(mine["reproduced"]) == {"true"} and set(mine["published_as"]) == {"paper-m"}
    other = measured[measured["model"] == "other"]
    assert other["reproduced"].isna().all() and other["published_as"].isna().all()
    published = out[out["kind"] == "published"]
    assert set(published["model"]) == {"published:paper-m"} and len(published) == 4
    assert published["reproduced"].isna().all() and published["in_registry"].all()
    assert len(reproduction) == 4 * 7
    baseline, _ = with_published(report.assign(is_baseline=True), None, {})
    assert set(baseline["kind"]) == {"baseline"} and "published:" not in "".join(baseline["model"])


def test_the_published_kappa_and_agreement_cannot_both_be_cohens_on_the_same_comparisons(tables, shared_data_dir):
    """For every published configuration, kappa and percent agreement imply a chance agreement
    p_e = (p_o - kappa) / (1 - kappa) below the smallest share of an expert label: no labelling of
    the expert comparisons has both figures under Cohen's kappa and plain percent agreement on the
    same comparisons (the least chance agreement a judge can have is the smallest expert share, by
    answering only that label). So one of the two is on another basis in the paper, and a faithful
    re-run shows ``false`` for one of them; docs/aggregation.md says so."""
    from argassets.argument_quality.corpus import find_corpus_files, load_corpus

    _, experts = load_corpus(find_corpus_files(shared_data_dir / "webis-argquality20"))
    for dimension, part in tables["experts"].groupby("dimension"):
        shares = experts.loc[experts["dimension"] == dimension, "label"].value_counts(normalize=True)
        p_o = part["percent_agreement"] / 100.0
        implied = (p_o - part["cohen_kappa"]) / (1.0 - part["cohen_kappa"])
        assert (implied < shares.min()).all(), dimension
