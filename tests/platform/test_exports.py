"""``argassets export eee | hf`` on a real run (the sample corpus, the random judge): each export passes
its format's own validator, and the exported judgments imported again give identical reports."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from argassets.platform.reporting.exports.eee_validator import validate_tree, wheel_path
from argassets.platform.reporting.exports.hf import validate_croissant
from tests.cli_home import BIN, INPUTS_REGISTRY, ROOT, cli_environment

METRICS = ["pearson", "spearman", "kendall", "mae", "rmse", "cohen_kappa", "krippendorff_alpha", "percent_agreement"]


def _argassets(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "argassets"), *argv], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900
    )


def _table(folder: Path, name: str) -> pd.DataFrame:
    files = str(folder / "argassets.tables" / name / "**" / "*.parquet")
    return duckdb.sql(f"select * from read_parquet('{files}', hive_partitioning = true)").df()


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory, study_a_inputs_home: Path) -> tuple[Path, dict[str, str]]:
    """A home where the random judge judged the sample and every Study A report ran."""
    folder = tmp_path_factory.mktemp("exported")
    env = cli_environment(folder, INPUTS_REGISTRY, inputs=study_a_inputs_home)
    env["ARGASSETS_EEE_WHEEL"] = str(wheel_path())
    done = _argassets(env, "materialize", "random", "--with-reports")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return folder, env


def test_eee_records_pass_every_eval_evers_validator(judged: tuple[Path, dict[str, str]]) -> None:
    folder, env = judged
    done = _argassets(env, "export", "eee", "--study", "argument_quality", "--out", str(folder / "eee"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert validate_tree(folder / "eee") == {}
    [record] = (folder / "eee" / "data" / "argassets-argument_quality" / "argassets" / "random").glob("*.json")
    document = json.loads(record.read_text())
    report = _table(folder, "aq_agreement_report").set_index(["dimension", "strategy"])
    results = {r["evaluation_result_id"]: r for r in document["evaluation_results"]}
    kappa = results["logic/zero/cohen_kappa"]
    assert kappa["score_details"]["score"] == pytest.approx(report.loc[("logic", "zero"), "cohen_kappa"])
    assert kappa["score_details"]["uncertainty"]["num_samples"] == report.loc[("logic", "zero"), "n_comparisons"]
    judge = kappa["metric_config"]["llm_scoring"]["judges"][0]["model_info"]
    assert judge["name"] == "random" and "logically stronger" in kappa["metric_config"]["llm_scoring"]["input_prompt"]
    # the control: the same validator refuses a record that breaks the schema
    del document["evaluation_results"][0]["metric_config"]["lower_is_better"]
    record.write_text(json.dumps(document))
    assert list(validate_tree(folder / "eee")) == [record.relative_to(folder / "eee").as_posix()]


def test_an_exported_partition_imported_again_gives_identical_reports(
    judged: tuple[Path, dict[str, str]], tmp_path: Path, study_a_inputs_home: Path
) -> None:
    folder, env = judged
    out = folder / "hf"
    done = _argassets(env, "export", "hf", "--study", "argument_quality", "--model", "random", "--out", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    assert validate_croissant(out / "croissant.json", read_rows=10**6) == []
    card = (out / "README.md").read_text()
    assert card.startswith("---\nlicense: cc-by-4.0\n") and "config_name: aq_judgments_tidy" in card
    tidy = pd.read_parquet(out / "data" / "aq_judgments_tidy.parquet")
    assert len(tidy) == len(_table(folder, "aq_judgments"))
    # a new home whose `random` is the exported file, imported through the tidy importer
    registry = (
        f'[[models]]\nname = "random"\nbackend = "import"\nformat = "tidy"\n'
        f'path = "{out / "data" / "aq_judgments_tidy.parquet"}"\nstudies = ["argument_quality"]\n'
    )
    again = cli_environment(tmp_path / "again", registry, inputs=study_a_inputs_home)
    done = _argassets(again, "materialize", "random", "--with-reports")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    keys = ["model", "strategy", "dimension"]
    before = _table(folder, "aq_agreement_report").sort_values(keys).reset_index(drop=True)
    after = _table(tmp_path / "again", "aq_agreement_report").sort_values(keys).reset_index(drop=True)
    assert len(before) == len(after) > 0 and set(before["model"]) == set(after["model"]) == {"random"}
    pd.testing.assert_frame_equal(before[keys + METRICS], after[keys + METRICS])
    scores = ["model", "strategy", "dimension", "argument_id", "bt_score"]
    pd.testing.assert_frame_equal(
        _table(folder, "aq_bt_scores")[scores].sort_values(scores[:4]).reset_index(drop=True),
        _table(tmp_path / "again", "aq_bt_scores")[scores].sort_values(scores[:4]).reset_index(drop=True),
    )


def test_an_export_of_nothing_names_the_command_that_fixes_it(judged: tuple[Path, dict[str, str]]) -> None:
    _, env = judged
    done = _argassets(env, "export", "eee", "--model", "no-such-model", "--out", "/nonexistent/x")
    assert done.returncode == 2
    assert "no reports to export for 'no-such-model': run `argassets run-default` (about" in done.stderr
