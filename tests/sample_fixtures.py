"""The sample corpus's Study A inputs (corpora, few-shot examples, prompts), materialised once per session.

Tests that judge a partition copy the DuckDB file and add their own judgments to the copy.
"""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from argassets.argument_quality.assets import corpora, prompts
from argassets.argument_quality.resources import WebisSourceResource
from argassets.platform.paths import SAMPLE_DATA_DIR
from argassets.platform.resources.data import PublishedDataResource
from argassets.platform.resources.storage import duckdb_io_manager

#: The assets upstream of ``aq_judgments``.
UPSTREAM = [corpora.webis_corpus, prompts.aq_few_shot_examples, prompts.aq_prompts]


@pytest.fixture(scope="session")
def upstream_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A DuckDB file holding the sample corpus's Study A inputs; copy it, never write to it."""
    database = tmp_path_factory.mktemp("upstream") / "upstream.duckdb"
    result = dg.materialize(
        UPSTREAM,
        resources={
            "io_manager": duckdb_io_manager(str(database)),
            "data": PublishedDataResource(data_dir=str(SAMPLE_DATA_DIR)),
            "webis_source": WebisSourceResource(url=""),
        },
    )
    assert result.success
    return database
