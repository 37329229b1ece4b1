"""Study B assets end to end: prompts, study items, predictions per partition, stats, ensembles, reports.

The knowledge base comes from the same AIF library calls as the ``political_kb_arguments`` asset
(the session fixture ``qt30_kb`` of ``tests/kb_fixtures.py``), served by a stand-in asset of that
key, so these tests do not run the knowledge-base stage's other outputs (Neo4j, relations).
"""

import json
import logging
from pathlib import Path

import dagster as dg
import numpy as np
import pandas as pd
import pytest

from argassets.platform.judging.interface import SamplingParams
from argassets.platform.judging.study_asset import judging_asset
from argassets.platform.resources.data import PublishedDataResource
from argassets.platform.resources.judges import JudgeResource, JudgmentCacheResource
from argassets.platform.resources.registry import ModelRegistryResource
from argassets.platform.resources.storage import duckdb_io_manager
from argassets.political.assets import ensembles, prompts, reliability, study_systems, validation
from argassets.political.human_studies import read_pairwise_study, read_pointwise_study
from argassets.political.model_stats import scores_from_json
from argassets.political.study import STUDY as POLITICAL
from argassets.political.study_items import match_study_items
from argassets.studies import code_location_studies
from asset_checks.political import predictions as political_checks
from asset_checks.political import reliability as reliability_checks
from tests.model_partitions import add_partitions

#: The judging asset the platform builds from the study's declaration.
POLITICAL_PREDICTIONS = judging_asset(POLITICAL)

GPT4O = "gpt_4o_2024_08_06"
#: How far the published import's validation rows may be from the study file's (see the test).
PAIRWISE_TOLERANCE = 0.02
POINTWISE_TOLERANCE = 0.02


@pytest.fixture(scope="session")
def kb_arguments(qt30_kb) -> pd.DataFrame:
    """``political_kb_arguments`` as the knowledge-base asset builds it (shared session fixture)."""
    return qt30_kb.arguments


@pytest.fixture(scope="session")
def studies(shared_data_dir):
    human = shared_data_dir / "political" / "human"
    return read_pointwise_study(human), read_pairwise_study(human)


def _tidy_mirror_of_gpt4o(kb_arguments, studies, path: Path) -> int:
    """A tidy import file that answers, for every study item's KB argument, what GPT-4o answered in
    the published study files: its pairwise score array plus NAs, and for pointwise-only items
    as many NAs as its published probability of NA says (the rest '50')."""
    pointwise, pairwise = studies
    matches = match_study_items(kb_arguments, pointwise.items, pairwise.items)
    pair_rows = pairwise.published[pairwise.published["prefix"] == GPT4O].set_index("meta_id")
    point_rows = pointwise.published[pointwise.published["prefix"] == GPT4O].set_index("meta_id")
    answers: dict[str, list[str]] = {}
    for record in matches.itertuples(index=False):
        if record.argument_id in answers and record.study == "pointwise":
            continue
        if record.study == "pairwise":
            row = pair_rows.loc[record.meta_id]
            texts = [json.dumps({"Score": s}) for s in row["scores"]] + ['{"Score": "NA"}'] * int(row["na_count"])
        else:
            k = int(round(point_rows.loc[record.meta_id, "prob_na"] * 5))
            texts = ['{"Score": "NA"}'] * k + ['{"Score": 50}'] * (5 - k)
        answers[record.argument_id] = texts
    rows = [
        {"argument_id": argument_id, "run": run, "raw_output": text}
        for argument_id, texts in answers.items()
        for run, text in enumerate(texts)
    ]
    pd.DataFrame(rows).to_csv(path, index=False)
    return len(answers)


@pytest.fixture()
def registry_file(tmp_path, kb_arguments, studies, monkeypatch) -> Path:
    n_items = _tidy_mirror_of_gpt4o(kb_arguments, studies, tmp_path / "mirror.csv")
    text = f"""
[[models]]
name = "random"
backend = "random"
studies = ["argument_quality", "political"]
size_class = "baseline"
seed = 7
scope = {{ max_arguments = 150 }}

[[models]]
name = "mirror"
backend = "import"
studies = ["political"]
path = "{tmp_path / "mirror.csv"}"
format = "tidy"
reasoning = true
scope = {{ max_arguments = {n_items} }}

[[models]]
name = "published-gpt4o"
backend = "import"
studies = ["political"]
path = "political/predictions/gpt4o.tsv"
format = "published_tsv"

[[models]]
name = "longer-wins"
backend = "longer-wins"
studies = ["argument_quality"]
"""
    path = tmp_path / "models.toml"
    path.write_text(text)
    monkeypatch.setenv("ARGASSETS_MODELS", str(path))
    return path


def _resources(duckdb_path: Path, tmp_path: Path) -> dict:
    return {
        "io_manager": duckdb_io_manager(str(duckdb_path)),
        "data": PublishedDataResource(),
        "registry": ModelRegistryResource(studies=code_location_studies()),
        "judge": JudgeResource(),
        "judgment_cache": JudgmentCacheResource(path=str(tmp_path / "cache.sqlite")),
    }


def _kb_stand_in(frame: pd.DataFrame) -> dg.AssetsDefinition:
    @dg.asset(name="political_kb_arguments", group_name="knowledge_base")
    def stand_in() -> pd.DataFrame:
        return frame

    return stand_in


def _read(duckdb_path: Path, table: str) -> pd.DataFrame:
    import duckdb

    with duckdb.connect(str(duckdb_path), read_only=True) as connection:
        return connection.execute(f"SELECT * FROM main.{table}").df()


UPSTREAM = [prompts.political_prompts, prompts.political_study_items, prompts.political_published_index]
PER_PARTITION = [POLITICAL_PREDICTIONS]
REPORTS = [
    ensembles.political_model_stats,
    ensembles.political_ensemble_members,
    ensembles.political_ensembles,
    validation.political_pointwise_validation,
    validation.political_pairwise_validation,
    validation.political_human_agreement,
    validation.political_pairwise_connections,
    reliability.political_reliability_battery,
]
# political_results_page reads the kb_analysis tables too: its page is tested from report tables in
# test_political_page_sources.py and on the real KB in test_kb_analysis_published.py
CHECKS = [
    political_checks.political_scores_in_range,
    political_checks.political_pairwise_graph_connected,
    political_checks.political_study_items_accounted,
]


@pytest.mark.slow
def test_political_pipeline_end_to_end(kb_arguments, registry_file, duckdb_path, tmp_path):
    instance = dg.DagsterInstance.ephemeral()
    partitions = ["random", "mirror", "published-gpt4o", "longer-wins"]
    add_partitions(instance, partitions)
    resources = _resources(duckdb_path, tmp_path)
    everything = [_kb_stand_in(kb_arguments), *UPSTREAM, *PER_PARTITION, *REPORTS]

    result = dg.materialize(
        everything,
        selection=dg.AssetSelection.assets("political_kb_arguments", *UPSTREAM),
        resources=resources,
        instance=instance,
        raise_on_error=True,
    )
    checks = dg.materialize(
        everything + [political_checks.political_study_items_accounted],
        selection=dg.AssetSelection.checks(political_checks.political_study_items_accounted),
        resources=resources,
        instance=instance,
    )
    assert all(e.passed for e in checks.get_asset_check_evaluations())
    prompts = _read(duckdb_path, "political_prompts")
    assert len(prompts) == len(kb_arguments)
    assert prompts["user"].str.contains("Proposition: '").all()
    items = _read(duckdb_path, "political_study_items")
    assert len(items) == 1100 and items["argument_id"].notna().all()
    assert result.success

    for key in partitions:
        run = dg.materialize(
            everything + [political_checks.political_scores_in_range],
            selection=dg.AssetSelection.assets(POLITICAL_PREDICTIONS)
            | dg.AssetSelection.checks(political_checks.political_scores_in_range),
            partition_key=key,
            resources=resources,
            instance=instance,
        )
        assert run.success, key
        assert all(e.passed for e in run.get_asset_check_evaluations()), key
    predictions = _read(duckdb_path, "political_predictions")
    by_model = predictions.groupby("judge_model").size().to_dict()
    assert by_model["random"] == 150 * 5
    assert by_model["published-gpt4o"] == 20557 * 5  # every KB argument whose prompt was released
    assert "longer-wins" not in by_model  # not in the study: the partition is not materialised
    random_rows = predictions[predictions["judge_model"] == "random"]
    assert random_rows["is_na"].any() and (random_rows["is_valid"] & ~random_rows["is_na"]).any()
    assert random_rows[["temperature", "top_p"]].iloc[0].tolist() == [0.0, 0.1]
    protocol = SamplingParams(temperature=0.0, top_p=0.1, seed=123, max_tokens=32)
    assert set(random_rows["sampling_key"]) == {protocol.key()}
    # a pilot scope takes the pairwise-study arguments first
    pairwise_args = set(items.loc[items["study"] == "pairwise", "argument_id"])
    assert pairwise_args <= set(random_rows["argument_id"])
    published = predictions[predictions["judge_model"] == "published-gpt4o"]
    assert published["argument_id"].isin(set(kb_arguments["argument_id"])).all()
    index = _read(duckdb_path, "political_published_index").set_index("node_id")
    assert len(index) == 23300 and index.loc[published["published_index"].astype(int), "representative"].all()

    battery_check = reliability_checks.political_reliability_battery_rows_and_ranges
    run = dg.materialize(
        everything + CHECKS[1:2] + [battery_check],
        selection=dg.AssetSelection.assets(*[k for a in REPORTS for k in a.keys])
        | dg.AssetSelection.checks(*CHECKS[1:2], battery_check),
        resources=resources,
        instance=instance,
    )
    assert run.success
    assert all(e.passed for e in run.get_asset_check_evaluations())

    members = _read(duckdb_path, "political_ensemble_members").set_index("system")
    assert not members.loc["random", "eligible"] and members.loc["random", "note"] == "baseline"
    assert members.loc["published-gpt4o", ["eligible", "E1", "E2", "E3"]].tolist() == [True, True, False, True]
    assert members.loc["published-gpt4o", "note"].endswith("(counted over its whole published file)")
    assert members.loc["mirror", ["E1", "E2"]].tolist() == [True, True]
    ensembles = _read(duckdb_path, "political_ensembles")
    e1 = ensembles[ensembles["system"] == "E1"].set_index("argument_id")
    stats = _read(duckdb_path, "political_model_stats")
    mirror = stats[stats["system"] == "mirror"].set_index("argument_id")
    gpt4o = stats[stats["system"] == "published-gpt4o"].set_index("argument_id")
    assert set(e1.index) == set(mirror.index) | set(gpt4o.index)
    some = mirror.index[0]
    # pooled in registry order: mirror, then published-gpt4o
    assert scores_from_json(e1.loc[some, "scores"]) == (
        scores_from_json(mirror.loc[some, "scores"]) + scores_from_json(gpt4o.loc[some, "scores"])
    )

    pairwise = _read(duckdb_path, "political_pairwise_validation").set_index(["system", "subset"])
    metrics = ["d_footrule", "d_tau", "alpha_ordinal", "macro_f1", "n_pairs"]
    published_row = pairwise.loc[(f"published:{GPT4O}", "all"), metrics].to_numpy(dtype=float)
    # the platform's predictions, joined by text, reproduce the published GPT-4o row exactly ...
    np.testing.assert_allclose(pairwise.loc[("mirror", "all"), metrics].to_numpy(dtype=float), published_row)
    # ... and the published TSV import, joined by text, comes close: 3 of the 100 items are rows the
    # study took from a glue nodeset's repeat, while the KB carries the first row of each text
    np.testing.assert_allclose(
        pairwise.loc[("published-gpt4o", "all"), metrics].to_numpy(dtype=float), published_row, atol=PAIRWISE_TOLERANCE
    )
    for subset in ("P11", "P10", "P01", "P00"):
        np.testing.assert_allclose(
            pairwise.loc[("mirror", subset), metrics].to_numpy(dtype=float),
            pairwise.loc[(f"published:{GPT4O}", subset), metrics].to_numpy(dtype=float),
        )
    assert {"human:left", "human:right", "baseline:all-equal", "baseline:worst", "E1", "published:ensemble3"} <= {
        s for s, _ in pairwise.index
    }
    assert pairwise.loc[("published:ensemble3", "all"), "alpha_ordinal"] > 0.6
    pointwise = _read(duckdb_path, "political_pointwise_validation").set_index(["system", "partition"])
    cols = ["macro_f1", "micro_f1", "precision", "recall", "balanced_accuracy", "alpha_nominal", "n"]
    for partition in ("full", "confident", "ambiguous"):
        np.testing.assert_allclose(
            pointwise.loc[("mirror", partition), cols].to_numpy(dtype=float),
            pointwise.loc[(f"published:{GPT4O}", partition), cols].to_numpy(dtype=float),
        )
    # the published import is joined to the pointwise items by text now
    np.testing.assert_allclose(
        pointwise.loc[("published-gpt4o", "full"), cols].to_numpy(dtype=float),
        pointwise.loc[(f"published:{GPT4O}", "full"), cols].to_numpy(dtype=float),
        atol=POINTWISE_TOLERANCE,
    )
    assert pointwise.loc[("human:inter-annotator", "full"), "n"] == 1000
    # the inter-model rows: the paper's convention on the published models, and both groups' rows in Markdown
    assert pointwise.loc[("inter-model:published", "ambiguous"), "alpha_nominal"] == pytest.approx(-0.0483, abs=5e-5)
    assert pointwise.loc[("inter-model:published", "ambiguous"), "missing_share"] > 0
    assert pointwise.loc[("inter-model:published:threshold", "ambiguous"), "missing_share"] == 0
    shown = instance.get_latest_materialization_event(dg.AssetKey("political_pointwise_validation"))
    agreement = shown.asset_materialization.metadata["agreement"].value
    for group in ("published", "platform"):
        for row in (f"inter-model:{group}", f"inter-model:{group}:threshold", f"human-model:{group}"):
            assert sum(f"| {row} " in line for line in agreement.splitlines()) == 5, row
    assert "-0.048" in agreement and "0.485" in agreement

    # the battery's humans' row is the annotators' alpha of the validation; every judge in both scopes
    battery = _read(duckdb_path, "political_reliability_battery").set_index(["system", "scope", "metric"])
    assert battery.loc[("humans", "study", "alpha_na"), "estimate"] == pytest.approx(
        pointwise.loc[("human:inter-annotator", "full"), "alpha_nominal"]
    )
    assert battery.loc[("published-gpt4o", "kb", "na_share"), "n"] == 20557 * 5
    assert battery.loc[("random", "kb", "alpha_score"), "flagged"]  # a fresh draw each repetition

    connections = _read(duckdb_path, "political_pairwise_connections")
    assert len(connections) == 100 and connections["component"].nunique() == 1
    assert (connections["entropy_bits"] <= 3.0 + 1e-12).all()
    agreement = _read(duckdb_path, "political_human_agreement")
    assert set(agreement["statistic"]) == {"alpha_ordinal_left_vs_right", "share_of_pairs"}

    materialization = instance.get_latest_materialization_event(dg.AssetKey("political_pairwise_validation"))
    metadata = materialization.asset_materialization.metadata
    assert metadata["macro_f1_vs_alpha"].value.startswith(
        "![macro-F1 vs ordinal alpha per subset](data:image/png;base64,"
    )


def test_published_tsv_paths_resolve_against_the_data_folder(shared_data_dir):
    from argassets.platform.registry.model_entry import model_entry

    entry = model_entry(
        name="p",
        backend="import",
        studies=["political"],
        path="political/predictions/gpt4o.tsv",
        format="published_tsv",
    )
    published = entry.judgments_file
    assert published is not None and published.format == "published_tsv"
    assert published.resolve(shared_data_dir) == shared_data_dir / "political/predictions/gpt4o.tsv"
    absolute = entry.model_copy(update={"path": "/elsewhere/x.tsv"}).judgments_file
    assert absolute is not None and absolute.resolve(shared_data_dir) == Path("/elsewhere/x.tsv")
    with pytest.raises(FileNotFoundError, match="ARGASSETS_DATA_DIR"):
        published.resolve(None)


def test_definitions_hold_the_political_assets_and_checks():
    from argassets.definitions import defs

    graph = defs.resolve_asset_graph()
    groups = {
        "political_prompts": "prompts",
        "political_study_items": "corpora",
        "political_published_index": "corpora",
        "political_predictions": "judgments",
        "political_model_stats": "aggregation",
        "political_ensemble_members": "aggregation",
        "political_ensembles": "aggregation",
        "political_pointwise_validation": "reports",
        "political_pairwise_validation": "reports",
        "political_pointwise_comparisons": "reports",
        "political_pairwise_comparisons": "reports",
        "political_human_agreement": "reports",
        "political_pairwise_connections": "reports",
        "political_results_page": "reports",
        "political_reliability_battery": "reports",
    }
    for name, group in groups.items():
        node = graph.get(dg.AssetKey(name))
        assert node.group_name == group, name
        assert node.description, name
    predictions = graph.get(dg.AssetKey("political_predictions"))
    assert predictions.partitions_def.name == "models_political"
    assert dg.AssetKey("political_kb_arguments") in graph.get(dg.AssetKey("political_prompts")).parent_keys
    check_names = {key.name for key in graph.asset_check_keys}
    assert {
        "political_scores_in_range",
        "political_pairwise_graph_connected",
        "political_study_items_accounted",
        "political_ensembles_match_released",
        "political_reliability_battery_rows_and_ranges",
    } <= check_names


def test_no_eligible_model_leaves_the_ensembles_empty_without_breaking_the_reports():
    from argassets.studies import parse_registry

    registry = parse_registry(
        {
            "models": [
                {"name": "random", "backend": "random", "studies": ["political"]},
                {
                    "name": "pub",
                    "backend": "import",
                    "studies": ["political"],
                    "path": "x.tsv",
                    "format": "published_tsv",
                },
            ]
        }
    )
    stats = pd.DataFrame(
        {
            "system": ["random"],
            "argument_id": ["a"],
            "scores": ["[10]"],
            "mean": [10.0],
            "var": [0.0],
            "std": [0.0],
            "na_count": [4],
            "invalid_count": [0],
            "n_repetitions": [5],
            "prob_na": [0.8],
        }
    )
    table, members, listed = ensembles.ensemble_table(stats, registry)
    assert table.empty and listed == {"E1": [], "E2": [], "E3": []}
    assert {m.system: m.note for m in members}["random"] == "baseline"
    systems = study_systems.platform_systems(stats, registry)
    assert sorted(systems["system"]) == ["random"]
    # a published import is keyed by KB arguments and pooled like any model; the E3 rule counts its whole file
    with_pub = pd.concat(
        [stats, stats.assign(system="pub", scores="[]", mean=np.nan, var=np.nan, std=np.nan, na_count=5, prob_na=1.0)]
    )
    table, members, listed = ensembles.ensemble_table(with_pub, registry, counts={"pub": (10, 3, 0)})
    assert listed == {"E1": ["pub"], "E2": [], "E3": []}
    assert {m.system: m.n_scores for m in members}["pub"] == 10


@pytest.mark.slow
def test_out_of_range_published_scores_are_said_at_the_terminal(kb_arguments, duckdb_path, tmp_path, monkeypatch):
    """The published Mistral 7B file holds five -1 scores: kept as invalid rows, and a WARNING
    line in the run's log (printed at the terminal by argassets), not only a metadata count."""
    registry = tmp_path / "models.toml"
    registry.write_text(
        '[[models]]\nname = "published-mistral-7b"\nbackend = "import"\nstudies = ["political"]\n'
        'path = "political/predictions/mistral_7b.tsv"\nformat = "published_tsv"\n'
    )
    monkeypatch.setenv("ARGASSETS_MODELS", str(registry))
    instance = dg.DagsterInstance.ephemeral()
    add_partitions(instance, ["published-mistral-7b"])
    resources = _resources(duckdb_path, tmp_path)
    everything = [_kb_stand_in(kb_arguments), *UPSTREAM, *PER_PARTITION]
    assert dg.materialize(
        everything, selection=dg.AssetSelection.assets("political_kb_arguments", *UPSTREAM), resources=resources,
        instance=instance,
    ).success  # fmt: skip
    run = dg.materialize(
        everything, selection=dg.AssetSelection.assets(POLITICAL_PREDICTIONS),
        partition_key="published-mistral-7b", resources=resources, instance=instance,
    )  # fmt: skip
    assert run.success
    [materialisation] = run.asset_materializations_for_node("political_predictions")
    count = materialisation.metadata["out_of_range_published_values"].value
    warnings = [
        e.user_message
        for e in instance.all_logs(run.run_id)
        if e.level == logging.WARNING and "outside 0-100" in e.user_message
    ]
    assert count > 0 and len(warnings) == 1, warnings
    assert f"published-mistral-7b: {count} published score(s) outside 0-100" in warnings[0]
    assert "mistral_7b.tsv" in warnings[0] and "= -1" in warnings[0]
