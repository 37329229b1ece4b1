"""An adaptive entry's aq_judgments partition and the reports on it, on the invented sample corpus (fast).

The registry option ``adaptive`` judges the partition in rounds through the judgment cache; the
table holds only the judged comparisons, its metadata and scope column say it is partial by design,
and the completeness check and every report accept it as such.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from argassets.argument_quality.judgments import completeness, expected_items, scope_prompts
from argassets.argument_quality.scope import ArgumentQualityScope
from argassets.platform.judging.interface import ChatRequest, SamplingParams
from argassets.platform.registry.model_entry import ModelEntry
from argassets.platform.resources.judges import JudgeResource
from argassets.platform.storage.reader_file import copy_warehouse
from argassets.platform.study import ImportKeys
from asset_checks.argument_quality.judgments import judged_by_design
from tests.argument_quality.test_aq_reports_assets import materialise_reports, read, resources
from tests.argument_quality.test_aq_reports_assets import metadata as report_metadata
from tests.argument_quality.test_judgments_asset import check_results, metadata, run
from tests.instances import new_instance
from tests.model_partitions import add_partitions

OPTION = 'adaptive = { stop = "rank_stability", threshold = 0.9, max_share = 0.6, first_round = 0.2, round_size = 0.1 }'
REGISTRY = f"""
[[models]]
name = "adaptive-longer"
backend = "longer-wins"
studies = ["argument_quality"]
scope = {{ dimensions = ["logic", "rhetoric"], strategies = ["zero"] }}
{OPTION}

[[models]]
name = "random"
backend = "random"
studies = ["argument_quality"]
seed = 5
"""
#: Comparisons of the sample corpus per dimension.
PER_DIMENSION = 35


class DyingJudge:
    """The registry's judge, killed on its n-th batch; counts the requests of each batch."""

    def __init__(self, inner, die_on_batch: int | None, batches: list[int]):
        self.inner, self.die_on_batch, self.batches = inner, die_on_batch, batches
        self.backend = inner.backend

    def complete(self, requests: Sequence[ChatRequest], sampling: SamplingParams, runs: Sequence[int]):
        self.batches.append(len(requests))
        if len(self.batches) == self.die_on_batch:
            raise RuntimeError("worker killed")
        return self.inner.complete(requests, sampling, runs)

    def close(self) -> None:
        self.inner.close()


class DyingJudgeResource(JudgeResource):
    die_on_batch: int | None = None

    def build(self, entry: ModelEntry, import_keys: Sequence[ImportKeys] = ()):
        return DyingJudge(super().build(entry, import_keys), self.die_on_batch, BATCHES)


BATCHES: list[int] = []


@pytest.fixture()
def env(tmp_path: Path, upstream_db: Path):
    database = tmp_path / "argassets.duckdb"
    copy_warehouse(upstream_db, database)
    registry = tmp_path / "models.toml"
    registry.write_text(REGISTRY)
    with new_instance() as instance:
        add_partitions(instance, ["adaptive-longer", "random"])
        yield {"database": database, "registry": registry, "cache": tmp_path / "cache.sqlite", "instance": instance}


def judged(env, partition: str) -> pd.DataFrame:
    with duckdb.connect(str(env["database"]), read_only=True) as con:
        return con.execute("select * from aq_judgments where judge_model = ?", [partition]).df()


def test_an_adaptive_partition_holds_the_judged_rows_and_says_it_is_partial_by_design(env):
    result = run(env, "adaptive-longer")
    rows = judged(env, "adaptive-longer")
    info = metadata(result)
    assert info["design"] == "adaptive" and info["rounds"] >= 2
    cells = {cell["cell"]: cell for cell in info["design_cells"]}
    assert set(cells) == {"logic/zero", "rhetoric/zero"}
    for cell in cells.values():
        assert cell["stop_reason"] in {"rank_stable", "budget"} and cell["candidate_pairs"] == PER_DIMENSION
        judged_here = rows[rows["dimension"] == cell["cell"].split("/")[0]]["comparison_id"].nunique()
        assert judged_here == cell["judged_pairs"] < PER_DIMENSION
    assert info["share_judged"] == pytest.approx(rows["comparison_id"].nunique() / (2 * PER_DIMENSION), abs=1e-4)
    assert len(rows) == 3 * rows[["comparison_id", "dimension"]].drop_duplicates().shape[0]  # every run
    assert info["completions_sent"] == len(rows)
    note = info["design_note"]
    assert note.startswith(f"partial by design (adaptive, {info['share_judged']:.1%} judged, stopped by ")
    assert set(rows["scope"]) == {f"dimensions=logic,rhetoric; strategies=zero; {note}"}
    complete = check_results(result)["aq_judgments_complete"]
    assert complete.passed and complete.metadata["design"].value == "adaptive: partial by design"
    assert complete.metadata["prompts_judged"].value + complete.metadata["prompts_not_judged_by_design"].value == 70

    again = run(env, "adaptive-longer")
    assert metadata(again)["completions_sent"] == 0 and metadata(again)["design_note"] == note
    assert (
        judged(env, "adaptive-longer")
        .sort_values(["comparison_id", "run"])
        .reset_index(drop=True)[["comparison_id", "label"]]
        .equals(rows.sort_values(["comparison_id", "run"]).reset_index(drop=True)[["comparison_id", "label"]])
    )


def test_a_killed_adaptive_run_resumes_from_the_cache_at_its_round(env, monkeypatch: pytest.MonkeyPatch):
    from argassets.platform.judging.engines.longer_wins_engine import LongerWinsEntry

    monkeypatch.setattr(LongerWinsEntry, "engine_batch_size", lambda self: 4)
    complete = run(env, "adaptive-longer", judge=DyingJudgeResource())
    everything = len(judged(env, "adaptive-longer"))
    env["cache"].unlink()
    BATCHES.clear()
    failed = run(env, "adaptive-longer", judge=DyingJudgeResource(die_on_batch=5), raise_on_error=False)
    assert not failed.success and len(BATCHES) == 5
    done_before = 3 * sum(BATCHES[:4])  # four whole batches (x 3 runs) were committed
    BATCHES.clear()
    resumed = run(env, "adaptive-longer", judge=DyingJudgeResource())
    info = metadata(resumed)
    assert info["completions_from_cache"] == done_before
    assert info["completions_sent"] == everything - done_before == 3 * sum(BATCHES)
    assert info["design_note"] == metadata(complete)["design_note"]
    assert check_results(resumed)["aq_judgments_complete"].passed


def test_the_complete_check_still_counts_a_missing_run_of_a_judged_comparison(env):
    """Partial by design covers the comparisons not chosen, not a chosen one that lacks a run."""
    run(env, "adaptive-longer")
    rows = judged(env, "adaptive-longer")
    prompts = read(env["database"], "aq_prompts")
    in_scope = scope_prompts(prompts, ArgumentQualityScope(dimensions=["logic", "rhetoric"], strategies=["zero"]))
    for table, missing in ((rows, 0), (rows.drop(index=rows.index[0]), 1)):
        chosen, design = judged_by_design(in_scope, table)
        assert completeness(table, expected_items(chosen, ("ab",)))["missing"] == missing
        assert design["prompts_judged"] == rows[["comparison_id", "dimension"]].drop_duplicates().shape[0]
        assert design["design_note"].startswith("dimensions=logic,rhetoric; strategies=zero; partial by design")
    # Without the design, the same partition is incomplete.
    assert completeness(rows, expected_items(in_scope, ("ab",)))["missing"] > 0


def run_resources(env) -> dict:
    return resources(env["database"], env["registry"], env["cache"], None)


def test_the_reports_read_an_adaptive_partition_as_partial_by_design(env, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("ARGASSETS_DUCKDB", str(env["database"]))
    for name in ("adaptive-longer", "random"):
        assert run(env, name).success
    result = materialise_reports(run_resources(env), env["instance"], {"aq_bt_scores": {"config": {"n_bootstrap": 20}}})
    assert result.success
    agreement = read(env["database"], "aq_agreement_report")
    adaptive = agreement[(agreement["model"] == "adaptive-longer") & (agreement["dimension"] != "mean")]
    assert set(adaptive["dimension"]) == {"logic", "rhetoric"}
    assert adaptive["scope"].str.contains("partial by design (adaptive, ", regex=False).all()
    assert (adaptive["n_comparisons"] < PER_DIMENSION).all() and (adaptive["n_comparisons"] > 0).all()
    assert "partial by design" in report_metadata(result, "aq_agreement_report")["report"]
    scores = read(env["database"], "aq_bt_scores")
    assert {"logic", "rhetoric"} <= set(scores.loc[scores["model"] == "adaptive-longer", "dimension"])
