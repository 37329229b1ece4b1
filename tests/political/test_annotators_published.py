"""The annotator reports on the real knowledge base and the 22 published models (E1-E3 pooled from
them): the assets materialise, pass their checks, and the README's human-study section states what
they compute."""

from __future__ import annotations

import importlib.machinery
import importlib.util
from pathlib import Path

import dagster as dg
import pandas as pd
import pytest

from argassets.platform.resources.data import PublishedDataResource
from argassets.platform.resources.registry import ModelRegistryResource
from argassets.platform.resources.storage import duckdb_io_manager
from argassets.political.assets import annotators
from argassets.political.assets.ensembles import membership_frame
from argassets.political.human_studies import read_pairwise_study, read_pointwise_study
from argassets.political.structure import positions
from argassets.political.study_items import match_study_items
from argassets.political.validation import human_findings
from argassets.studies import code_location_studies
from asset_checks.political import annotators as annotator_checks

# The full knowledge base and every published system: outside the fast loop.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


def _stand_in(name: str, frame: pd.DataFrame) -> dg.AssetsDefinition:
    @dg.asset(name=name)
    def stand_in() -> pd.DataFrame:
        return frame

    return stand_in


def _read(duckdb_path: Path, table: str) -> pd.DataFrame:
    import duckdb

    with duckdb.connect(str(duckdb_path), read_only=True) as connection:
        return connection.execute(f"SELECT * FROM main.{table}").df()


def _readme_script():
    loader = importlib.machinery.SourceFileLoader("readme_figures", str(ROOT / "scripts" / "readme-figures"))
    spec = importlib.util.spec_from_loader("readme_figures", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def inputs(qt30_kb, published_models, shared_data_dir) -> dict[str, pd.DataFrame]:
    human = shared_data_dir / "political" / "human"
    items = match_study_items(qt30_kb.arguments, read_pointwise_study(human).items, read_pairwise_study(human).items)
    members = membership_frame(published_models.members)
    return {
        "political_kb_arguments": qt30_kb.arguments,
        "political_study_items": items,
        "political_model_stats": published_models.stats,
        "political_ensembles": published_models.ensembles,
        "political_ensemble_members": members,
        "political_system_positions": positions.system_positions(
            published_models.stats, published_models.ensembles, members
        ),
    }


def test_the_reports_materialise_pass_their_checks_and_the_readme_states_them(inputs, duckdb_path):
    stand_ins = [_stand_in(name, frame) for name, frame in inputs.items()]
    ours = dg.load_assets_from_modules([annotators])
    checks = dg.load_asset_checks_from_modules([annotator_checks])
    resources = {
        "io_manager": duckdb_io_manager(str(duckdb_path)),
        "data": PublishedDataResource(),
        "registry": ModelRegistryResource(studies=code_location_studies()),
    }
    dg.materialize(stand_ins, resources=resources, instance=dg.DagsterInstance.ephemeral())
    result = dg.materialize(
        [*stand_ins, *ours, *checks],
        selection=dg.AssetSelection.assets(*ours) | dg.AssetSelection.checks(*checks),
        resources=resources,
        instance=dg.DagsterInstance.ephemeral(),
    )
    assert result.success
    evaluations = result.get_asset_check_evaluations()
    assert len(evaluations) == 4 and all(e.passed for e in evaluations)
    replacement = _read(duckdb_path, "political_annotator_replacement").set_index(["task", "system"])
    # the platform's import of GPT-4o, joined by text, is judged like the paper's row of it
    assert ("pointwise", "published-gpt4o") in replacement.index and ("pointwise", "E3") in replacement.index
    assert replacement.loc[("pointwise", "human:rest"), "agreement_with_rest"] == pytest.approx(0.6567, abs=1e-4)
    affiliation = _read(duckdb_path, "political_affiliation_agreement")
    assert "CONSENT_REVOKED" not in set(affiliation["group"])
    ppi = _read(duckdb_path, "political_ppi_estimates")
    e1 = ppi[(ppi["system"] == "E1") & (ppi["debate"] == "all") & (ppi["scope"] == "buckets")]
    assert set(e1["estimand"]) == {"political_share", "mean_position"} and len(e1) == 6
    assert ppi["debate"].nunique() == 31  # overall and the 30 debates
    metadata = result.asset_materializations_for_node("political_annotator_reports")[0].metadata
    assert "data:image/png;base64," in metadata["agreement_with_rest"].value
    fragment = _readme_script().human_fragment_from_database(duckdb_path)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert human_findings.read_section(readme) == fragment.strip("\n")


def test_definitions_place_the_annotator_reports_in_the_reports_group():
    from argassets.definitions import defs

    graph = defs.resolve_asset_graph()
    for name in ("political_annotator_replacement", "political_affiliation_agreement", "political_ppi_estimates"):
        node = graph.get(dg.AssetKey(name))
        assert node.group_name == "reports" and node.description, name
    checks = {key.name for key in graph.asset_check_keys}
    assert "political_annotator_replacement_judges_every_published_system" in checks
