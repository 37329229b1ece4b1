"""A study is one declared object; the registry, catalog, automation, importer and CLI follow the list."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pandas as pd
import pytest
from pydantic import Field

from argassets import catalog, cli
from argassets.argument_quality.study import STUDY as ARGUMENT_QUALITY
from argassets.platform.judging.engines.importer import ImportFormatError, load_tidy_judgments
from argassets.platform.judging.interface import SamplingParams
from argassets.platform.operations.automation import study_roots
from argassets.platform.registry.entries import RegistryError, parse_registry
from argassets.platform.study import (
    ImportKeys,
    StudyDefinition,
    StudyScope,
    get_study,
    register_study,
    studies,
    study_names,
    unregister_study,
)
from argassets.political.study import STUDY as POLITICAL


class PersuasionScope(StudyScope):
    study: ClassVar[str] = "persuasion"

    max_pairs: int | None = Field(default=None, ge=1)


def _unused(*_args: object) -> None:
    raise AssertionError("not called by these tests")


PERSUASION = StudyDefinition(
    name="persuasion",
    title="A third study, declared in a test",
    root_asset="persuasion_judgments",
    asset_modules=(),
    check_modules=(),
    scope_model=PersuasionScope,
    default_sampling=SamplingParams(temperature=0.5, top_p=1.0, seed=None, max_tokens=8),
    build_requests=_unused,
    build_table=_unused,
    import_keys=ImportKeys(columns=("pair_id", "side"), allowed={"side": frozenset({"pro", "con"})}),
)


@pytest.fixture()
def persuasion() -> Iterator[StudyDefinition]:
    register_study(PERSUASION)
    yield PERSUASION
    unregister_study(PERSUASION.name)


def test_the_code_location_declares_two_studies() -> None:
    assert studies()[:2] == (ARGUMENT_QUALITY, POLITICAL)
    assert study_roots() == {"argument_quality": "aq_judgments", "political": "political_predictions"}
    assert catalog.ASSET_MODULES == [*ARGUMENT_QUALITY.asset_modules, *POLITICAL.asset_modules]
    assert catalog.CHECK_MODULES == [*ARGUMENT_QUALITY.check_modules, *POLITICAL.check_modules]
    assert not ARGUMENT_QUALITY.needs_published_data and POLITICAL.needs_published_data


def test_each_root_is_a_partitioned_asset_of_its_modules() -> None:
    import dagster as dg

    for study in studies():
        assets = dg.load_assets_from_modules(list(study.asset_modules))
        keys = {k.to_user_string() for a in assets if isinstance(a, dg.AssetsDefinition) for k in a.keys}
        assert study.root_asset in keys, study.name


def test_a_scope_model_must_belong_to_its_study() -> None:
    with pytest.raises(ValueError, match="its scope model PersuasionScope belongs to 'persuasion'"):
        StudyDefinition(**{**PERSUASION.__dict__, "name": "other"})


def test_a_third_study_registers_and_everything_shared_follows(persuasion: StudyDefinition, tmp_path: Path) -> None:
    assert study_names()[-1] == "persuasion" and get_study("persuasion") is persuasion
    assert study_roots()["persuasion"] == "persuasion_judgments"
    entry = {"name": "p", "backend": "random", "studies": ["persuasion"], "scope": {"max_pairs": 3}}
    registry = parse_registry({"models": [entry]})
    assert PersuasionScope.of(registry.get("p")).max_pairs == 3
    assert registry.get("p").scope_text("persuasion") == "max_pairs=3"
    assert registry.get("p").sampling_for(persuasion.default_sampling).temperature == 0.5
    with pytest.raises(RegistryError, match="scope of persuasion: max_pairs"):
        parse_registry({"models": [{**entry, "scope": {"persuasion": {"max_pairs": 0}}}]})
    parser = cli.build_parser()
    assert parser.parse_args(["materialize", "p", "--study", "persuasion"]).study == "persuasion"
    # the tidy importer knows the study's key columns and their allowed values
    path = tmp_path / "p.csv"
    pd.DataFrame({"pair_id": ["x", "y"], "side": ["pro", "con"], "run": [0, 0], "label": ["A", "B"]}).to_csv(
        path, index=False
    )
    tidy, keys = load_tidy_judgments(path)
    assert keys == ("pair_id", "side") and list(tidy["text"]) == ["A", "B"]
    pd.DataFrame({"pair_id": ["x"], "side": ["maybe"], "run": [0], "label": ["A"]}).to_csv(path, index=False)
    with pytest.raises(ImportFormatError, match=r"bad 'side' value 'maybe' \(allowed: \['con', 'pro'\]\)"):
        load_tidy_judgments(path)


def test_an_unregistered_study_is_unknown_again() -> None:
    assert "persuasion" not in study_names()
    with pytest.raises(RegistryError, match="unknown study 'persuasion'"):
        parse_registry({"models": [{"name": "p", "backend": "random", "studies": ["persuasion"]}]})
    with pytest.raises(KeyError, match="unknown study 'persuasion'"):
        get_study("persuasion")


def test_the_same_name_twice_is_an_error(persuasion: StudyDefinition) -> None:
    register_study(persuasion)  # the same object again is fine
    with pytest.raises(ValueError, match="a study named 'persuasion' is already registered"):
        register_study(StudyDefinition(**persuasion.__dict__))
