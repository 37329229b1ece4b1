"""Study B's workload: what ``argassets estimate MODEL --study political`` counts before a run."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from argassets.cli.estimate import workloads
from argassets.platform.judging.interface import Completion
from argassets.platform.operations.estimate import estimate_partition, missing_completions
from argassets.platform.registry.model_entry import model_entry
from argassets.platform.storage.judgment_cache.sqlite import JudgmentCache
from argassets.political.predictions import PROTOCOL_SAMPLING, workload
from argassets.political.prompts import N_REPETITIONS


def tables() -> dict[str, pd.DataFrame]:
    ids = [f"a{i}" for i in range(6)]
    prompts = pd.DataFrame(
        {
            "argument_id": ids,
            "system": "Score the argument.",
            "user": [f"argument {i} " * (i + 1) for i in range(6)],
            "locution": ids,
            "proposition": ids,
        }
    )
    # The validation studies' arguments come first in a pilot scope: pairwise, then pointwise.
    items = pd.DataFrame({"study": ["pointwise", "pairwise"], "argument_id": ["a4", "a5"]})
    return {"political_prompts": prompts, "political_study_items": items}


def test_political_is_estimable_from_its_study_definition() -> None:
    assert workloads()["political"][0] == "political_predictions"


def test_workload_follows_the_entry_scope_with_validation_items_first() -> None:
    entry = model_entry(name="pilot", backend="random", studies=["political"], scope={"max_arguments": 3})
    requests, runs, sampling = workload(entry, tables().__getitem__)
    assert [r.key for r in requests] == ["a0", "a4", "a5"]  # a5 (pairwise), a4 (pointwise), then a0
    assert runs == N_REPETITIONS == 5 and sampling == PROTOCOL_SAMPLING
    everything, _, _ = workload(model_entry(name="all", backend="random", studies=["political"]), tables().__getitem__)
    assert len(everything) == 6


def test_estimate_of_a_political_partition_counts_its_cache(tmp_path: Path) -> None:
    entry = model_entry(name="m", backend="openai", model_id="m", studies=["political"], throughput=5.0)
    requests, runs, sampling = workload(entry, tables().__getitem__)
    cache = JudgmentCache(tmp_path / "cache.sqlite")
    done = Completion(text='{"Score": 40}', run=0, seed=0, latency_s=0.1, requested_at="t", completed_at="t")
    cache.store("m@1", sampling.key(), "openai", [(requests[0].prompt_sha256, done)])
    counted = missing_completions(cache, "m@1", sampling.key(), requests, runs)
    cache.close()
    estimate = estimate_partition(entry, "political", requests, runs, counted, (5.0, "declared"), sampling.max_tokens)
    assert (estimate.completions, estimate.cached, estimate.to_send) == (30, 1, 29)
    assert estimate.seconds == 29 / 5.0
