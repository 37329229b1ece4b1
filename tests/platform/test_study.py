"""A study is one declared object; the registry, automation, importer and CLI follow the studies passed down."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import dagster as dg
import pandas as pd
import pytest
from pydantic import Field

from argassets.argument_quality.study import STUDY as ARGUMENT_QUALITY
from argassets.cli import build_parser
from argassets.platform.judging.engines.importer import ImportFormatError, load_tidy_judgments
from argassets.platform.judging.interface import PROVENANCE_COLUMNS, CachedCompletion, SamplingParams
from argassets.platform.judging.study_asset import judged_table, judging_asset, study_workload
from argassets.platform.operations.automation import study_roots
from argassets.platform.operations.study_definitions import study_assets
from argassets.platform.registry.entries import RegistryError, parse_registry
from argassets.platform.registry.model_entry import ModelEntry, model_entry
from argassets.platform.study import ImportKeys, RequestSet, Studies, StudyDefinition, StudyScope
from argassets.political.study import STUDY as POLITICAL
from argassets.studies import BUILT_IN, EXTRA_STUDIES_ENV_VAR, code_location_studies


class PersuasionScope(StudyScope):
    study: ClassVar[str] = "persuasion"

    max_pairs: int | None = Field(default=None, ge=1)


def _requests(entry: ModelEntry, scope: PersuasionScope, inputs) -> RequestSet:  # noqa: ANN001
    return RequestSet([], summary=f"{len(inputs['persuasion_pairs'])} pairs")


def _rows(asked: RequestSet, completions, judge_model: str) -> pd.DataFrame:  # noqa: ANN001
    return pd.DataFrame({"judge_model": judge_model, "pair_id": [c.key for c in completions]})


PERSUASION = StudyDefinition(
    name="persuasion",
    title="A third study, declared in a test",
    root_asset="persuasion_judgments",
    root_description="Verdicts on pairs.",
    inputs=("persuasion_pairs",),
    n_runs=2,
    scope_model=PersuasionScope,
    default_sampling=SamplingParams(temperature=0.5, top_p=1.0, seed=None, max_tokens=8),
    build_requests=_requests,
    build_table=_rows,
    import_keys=ImportKeys(columns=("pair_id", "side"), allowed={"side": frozenset({"pro", "con"})}),
)
STUDIES = Studies((*BUILT_IN, PERSUASION))


def test_the_code_location_declares_two_studies_and_the_platform_builds_their_roots() -> None:
    studies = code_location_studies()
    assert studies == (ARGUMENT_QUALITY, POLITICAL) and studies.names == ("argument_quality", "political")
    assert study_roots(studies) == {"argument_quality": "aq_judgments", "political": "political_predictions"}
    assert not ARGUMENT_QUALITY.needs_published_data and POLITICAL.needs_published_data
    for study in studies:
        root = judging_asset(study)
        assert root is judging_asset(study), "built once per study"
        assert root.key == dg.AssetKey(study.root_asset) and root.group_names_by_key[root.key] == "judgments"
        assert {k.to_user_string() for k in root.dependency_keys} == set(study.inputs)
        keys = {k.to_user_string() for a in study_assets(study) if isinstance(a, dg.AssetsDefinition) for k in a.keys}
        assert study.root_asset in keys and study.root_asset not in {
            k.to_user_string() for a in dg.load_assets_from_modules(list(study.asset_modules())) for k in a.keys
        }, "the root is the platform's, not a module's"


def test_a_declaration_is_checked() -> None:
    with pytest.raises(ValueError, match="its scope model PersuasionScope belongs to 'persuasion'"):
        StudyDefinition(**{**PERSUASION.__dict__, "name": "other"})
    with pytest.raises(ValueError, match="n_runs must be at least 1"):
        StudyDefinition(**{**PERSUASION.__dict__, "n_runs": 0})
    with pytest.raises(ValueError, match="two studies are named 'persuasion'"):
        Studies((PERSUASION, StudyDefinition(**PERSUASION.__dict__)))
    with pytest.raises(KeyError, match=r"unknown study 'x' \(known: argument_quality, political, persuasion\)"):
        STUDIES.get("x")


def test_the_registry_follows_the_studies_it_is_given(tmp_path: Path) -> None:
    entry = {"name": "p", "backend": "random", "studies": ["persuasion"], "scope": {"max_pairs": 3}}
    registry = parse_registry({"models": [entry]}, studies=STUDIES)
    assert registry.studies is STUDIES
    assert PersuasionScope.of(registry.get("p")).max_pairs == 3
    assert registry.get("p").scope_text("persuasion") == "max_pairs=3"
    assert registry.get("p").sampling_for(PERSUASION.default_sampling).temperature == 0.5
    with pytest.raises(RegistryError, match="scope of persuasion: max_pairs"):
        parse_registry({"models": [{**entry, "scope": {"persuasion": {"max_pairs": 0}}}]}, studies=STUDIES)
    # without the study, the same registry is refused: the list is what the caller passes, nothing global
    with pytest.raises(RegistryError, match="unknown study 'persuasion'"):
        parse_registry({"models": [entry]}, studies=code_location_studies())
    # read without the studies (the Slurm launcher): names and resources only, scopes left out
    unchecked = parse_registry({"models": [{**entry, "studies": ["nowhere"]}]}, studies=None)
    assert unchecked.get("p").scope == {} and unchecked.get("p").studies == ["nowhere"]
    with pytest.raises(RegistryError, match="read without the studies"):
        _ = unchecked.studies
    # an entry built in code carries validated scopes, never raw tables
    with pytest.raises(ValueError, match="a scope table is validated by the studies' scope models"):
        model_entry(name="q", backend="random", studies=["persuasion"], scope={"max_pairs": 3})


def test_the_importer_reads_the_key_columns_it_is_given(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    keys = [study.import_keys for study in STUDIES]
    pd.DataFrame({"pair_id": ["x", "y"], "side": ["pro", "con"], "run": [0, 0], "label": ["A", "B"]}).to_csv(
        path, index=False
    )
    tidy, used = load_tidy_judgments(path, key_sets=keys)
    assert used == ("pair_id", "side") and list(tidy["text"]) == ["A", "B"]
    with pytest.raises(ImportFormatError, match="needs a 'comparison_id' or 'argument_id' column"):
        load_tidy_judgments(path, key_sets=[study.import_keys for study in code_location_studies()])
    pd.DataFrame({"pair_id": ["x"], "side": ["maybe"], "run": [0], "label": ["A"]}).to_csv(path, index=False)
    with pytest.raises(ImportFormatError, match=r"bad 'side' value 'maybe' \(allowed: \['con', 'pro'\]\)"):
        load_tidy_judgments(path, key_sets=keys)


def test_the_cli_offers_the_studies_of_the_code_location(monkeypatch: pytest.MonkeyPatch) -> None:
    assert build_parser().parse_args(["materialize", "p", "--study", "political"]).study == "political"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["estimate", "p", "--study", "persuasion"])
    monkeypatch.setenv(EXTRA_STUDIES_ENV_VAR, "tests.platform.third_study.study")
    for command in (["materialize", "p"], ["backfill", "--all"], ["estimate", "p"], ["slurm", "backfill", "--all"]):
        assert build_parser().parse_args([*command, "--study", "persuasion"]).study == "persuasion"
    monkeypatch.setenv(EXTRA_STUDIES_ENV_VAR, "tests.platform.no_such_study")
    with pytest.raises(ValueError, match="cannot import study module 'tests.platform.no_such_study'"):
        code_location_studies()


def _completion(key: str, run: int) -> CachedCompletion:
    at = "2026-01-01T00:00:00+00:00"
    return CachedCompletion(key, run, "m", "sha", "sk", "A", 7, 0.5, at, at, "random", False)


def test_the_platform_adds_the_provenance_columns_and_checks_the_rows() -> None:
    completions = [_completion("b", 0), _completion("a", 0)]
    table = judged_table(PERSUASION, RequestSet([]), completions, "m", PERSUASION.default_sampling, True, "full")
    assert list(table.columns) == ["judge_model", "pair_id", *PROVENANCE_COLUMNS]
    assert table["temperature"].tolist() == [0.5, 0.5] and table["seed"].tolist() == [7, 7]
    assert table["is_baseline"].all() and table["scope"].tolist() == ["full", "full"]
    # rows may be reordered: each keeps its own completion's provenance
    reordered = StudyDefinition(**{**PERSUASION.__dict__, "build_table": lambda a, c, m: _rows(a, c, m).iloc[::-1]})
    flipped = judged_table(reordered, RequestSet([]), completions, "m", PERSUASION.default_sampling, True, "full")
    assert flipped["pair_id"].tolist() == ["a", "b"]
    short = StudyDefinition(**{**PERSUASION.__dict__, "build_table": lambda a, c, m: _rows(a, c, m).head(1)})
    with pytest.raises(ValueError, match="one row per completion \\(2\\).*it returned 1 rows"):
        judged_table(short, RequestSet([]), completions, "m", PERSUASION.default_sampling, True, "full")
    taken = StudyDefinition(**{**PERSUASION.__dict__, "build_table": lambda a, c, m: _rows(a, c, m).assign(seed=1)})
    with pytest.raises(ValueError, match=r"returned \['seed'\], which the platform adds"):
        judged_table(taken, RequestSet([]), completions, "m", PERSUASION.default_sampling, True, "full")


def test_an_estimate_reads_only_what_the_requests_need() -> None:
    entry = model_entry(name="p", backend="random", studies=["persuasion"])
    requests, runs, sampling = study_workload(PERSUASION, entry, lambda name: pd.DataFrame({"x": [1, 2]}))
    assert (requests, runs, sampling.temperature) == ([], 2, 0.5)
    nosy = StudyDefinition(**{**PERSUASION.__dict__, "build_requests": lambda e, s, inputs: inputs["aq_prompts"]})
    with pytest.raises(KeyError, match="'aq_prompts' is not an input of the study"):
        study_workload(nosy, entry, lambda name: pd.DataFrame())


def test_every_field_of_a_declaration_has_a_reader() -> None:
    """A field nobody reads is a promise nobody keeps: each is read outside platform/study.py."""
    import dataclasses
    import re

    root = Path(__file__).resolve().parents[2]
    code = "\n".join(
        path.read_text(encoding="utf-8")
        for folder in ("argassets", "sensors", "resources")
        for path in (root / folder).rglob("*.py")
        if path != root / "argassets" / "platform" / "study.py"
    )
    unread = [f.name for f in dataclasses.fields(StudyDefinition) if not re.search(rf"\.{f.name}\b", code)]
    assert unread == []
