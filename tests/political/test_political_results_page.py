"""Study B's results page: one name per system, one random baseline, the page's tables."""

from __future__ import annotations

from pathlib import Path

from argassets.platform.registry.entries import DEFAULT_REGISTRY_PATH
from argassets.political.human_studies import read_pointwise_study
from argassets.political.results_page import BASELINES_SAY, one_name_per_system, political_page_html
from argassets.political.system_names import published_system_names
from argassets.studies import load_registry
from tests.results_page_frames import POLITICAL_REGISTRY, political_pairwise_frame, political_pointwise_frame


def test_every_published_model_of_the_human_studies_has_one_registry_name(shared_data_dir: Path) -> None:
    study = read_pointwise_study(shared_data_dir / "political" / "human")
    prefixes = [p for p in study.prefixes if not p.startswith("ensemble")]
    registry = load_registry(DEFAULT_REGISTRY_PATH)
    names = published_system_names(registry, prefixes)
    assert sorted(names) == sorted(f"published:{p}" for p in prefixes)
    assert len(set(names.values())) == len(names)  # no two prefixes on one entry
    assert names["published:gpt_4_5_preview_2025_02_27"] == "published-gpt-4.5"
    assert names["published:llama3_1_8b"] == "published-llama-3.1-8b"
    assert names["published:claude_3_5_haiku_2024102"] == "published-claude-3.5-haiku"


def test_one_name_per_system_keeps_the_measured_row_and_renames_the_rest() -> None:
    report = political_pairwise_frame()
    merged = one_name_per_system(report, POLITICAL_REGISTRY, "subset")
    rows = merged[merged["subset"] == "all"].set_index("system")
    assert not any(s.startswith("published:gpt") or s.startswith("published:phi") for s in rows.index)
    assert rows.loc["published-gpt-4.5", "alpha_ordinal"] == 0.62  # the platform's row, not the study file's 0.63
    assert rows.loc["published-phi-4", "alpha_ordinal"] == 0.45  # only in the study file: renamed
    assert (rows.loc[["published-gpt-4.5", "published-phi-4"], "kind"] == "published").all()
    assert "published:ensemble3" in rows.index and len(merged) == len(report) - 5


def test_the_page_states_the_random_baseline_and_marks_no_baseline_best() -> None:
    text = political_page_html(political_pairwise_frame(), political_pointwise_frame(), POLITICAL_REGISTRY)
    assert BASELINES_SAY in text.replace("&#x27;", "'")
    assert "baseline:random" not in text
    best_rows = [line for line in text.split("<tr") if "badge best" in line]
    # one best per subset (5) and per partition (2), never a baseline or a human framing
    assert len(best_rows) == 7 and not any("kind-baseline" in row or "kind-human" in row for row in best_rows)
