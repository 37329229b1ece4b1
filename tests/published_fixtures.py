"""Session fixtures of the published political data: the released prompts, their index, the 22 models.

Computed once per test session (reading 22 files and pooling them takes a while on 2 cores) and
shared by the prompt, index, ensemble and Neo4j tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest

from argassets.platform.registry.entries import ModelRegistry, load_registry
from argassets.political.model_stats import model_stats
from argassets.political.prompts import render_prompts
from argassets.political.published import published_predictions_file, published_tsv_to_predictions, read_published_tsv
from argassets.political.published_index import (
    RELEASED_ENSEMBLES,
    RELEASED_PROMPTS,
    argument_published_rows,
    build_published_index,
    read_released_prompts,
)


@pytest.fixture(scope="session")
def released_prompts(shared_data_dir: Path) -> pd.DataFrame:
    return read_released_prompts(shared_data_dir / RELEASED_PROMPTS)


@pytest.fixture(scope="session")
def kb_prompts(qt30_kb) -> pd.DataFrame:
    """``political_prompts`` as the asset renders it for the QT30 knowledge base."""
    return render_prompts(qt30_kb.arguments)


@pytest.fixture(scope="session")
def published_index(kb_prompts: pd.DataFrame, released_prompts: pd.DataFrame) -> pd.DataFrame:
    return build_published_index(kb_prompts, released_prompts)


@pytest.fixture(scope="session")
def carried_rows(kb_prompts: pd.DataFrame, published_index: pd.DataFrame) -> pd.DataFrame:
    return argument_published_rows(kb_prompts, published_index)


@dataclass(frozen=True)
class PublishedModels:
    registry: ModelRegistry
    names: list[str]  # the published_tsv entries, in registry order
    stats: pd.DataFrame  # political_model_stats of the 22 imports
    ensembles: pd.DataFrame  # political_ensembles pooled from them
    members: list  # EnsembleMember rows
    listed: dict[str, list[str]]
    released: dict[str, pd.DataFrame]  # E2, E3 as released


@pytest.fixture(scope="session")
def published_models(shared_data_dir: Path, carried_rows: pd.DataFrame) -> PublishedModels:
    """The shipped registry's 22 published imports, keyed by KB argument, with E1/E2/E3 pooled by the
    same functions as the assets."""
    from argassets.political.assets.ensembles import ensemble_table, published_counts

    registry = load_registry(Path(__file__).resolve().parents[1] / "data" / "models.toml")
    files = {e.name: f for e in registry.models if (f := published_predictions_file(e)) is not None}
    entries = [registry.get(name) for name in files]
    frames = []
    for entry in entries:
        published = read_published_tsv(files[entry.name].resolve(shared_data_dir))
        frames.append(model_stats(published_tsv_to_predictions(published, entry.name, 5, argument_rows=carried_rows)))
    stats = pd.concat(frames, ignore_index=True)
    counts = published_counts(registry, shared_data_dir, [e.name for e in entries])
    ensembles, members, listed = ensemble_table(stats, registry, counts)
    released = {
        name: read_published_tsv(shared_data_dir / path, expected_node_ids=None)
        for name, path in RELEASED_ENSEMBLES.items()
    }
    return PublishedModels(registry, [e.name for e in entries], stats, ensembles, members, listed, released)
