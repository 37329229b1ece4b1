"""How long the operations machinery takes per tick, on the real code location and registry.

    .venv/bin/python benchmarks/bench_operations.py      # writes benchmarks/results/operations.json

Measured on an ephemeral instance (no runs executed): the registry sensor's first tick (every
partition to add) and a steady tick (nothing changed), one evaluation of every automation
condition, the nightly schedule's staleness evaluation, and the operations layout.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def timed(fn, repeat: int = 5) -> tuple[float, object]:
    samples, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = fn()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples), result


def main() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="bench-ops-"))
    os.environ.setdefault("ARGASSETS_DUCKDB", str(tmp / "argassets.duckdb"))
    import dagster as dg

    from argassets.definitions import defs
    from argassets.platform.operations.automation import operations_layout
    from argassets.studies import load_registry
    from sensors.registry_sensor import model_registry_sensor
    from sensors.schedules import nightly_refresh_schedule

    results: dict[str, object] = {"registry_entries": len(load_registry().models)}
    graph = defs.resolve_asset_graph()
    results["assets"] = len(list(graph.get_all_asset_keys()))
    results["layout_s"], _ = timed(lambda: operations_layout(graph, load_registry().studies))
    with dg.instance_for_test() as instance:
        first_s, first = timed(
            lambda: model_registry_sensor(dg.build_sensor_context(instance=instance, definitions=defs)), repeat=3
        )
        results["sensor_first_tick_s"] = first_s
        results["sensor_first_tick_partitions"] = len(first.dynamic_partitions_requests[0].partition_keys)
        for request in first.dynamic_partitions_requests:
            instance.add_dynamic_partitions(request.partitions_def_name, request.partition_keys)
        results["sensor_steady_tick_s"], _ = timed(
            lambda: model_registry_sensor(
                dg.build_sensor_context(instance=instance, definitions=defs, cursor=first.cursor)
            )
        )
        results["automation_evaluation_s"], _ = timed(
            lambda: dg.evaluate_automation_conditions(defs=defs, instance=instance), repeat=3
        )
        repo = defs.get_repository_def()
        results["nightly_schedule_s"], _ = timed(
            lambda: nightly_refresh_schedule.evaluate_tick(
                dg.build_schedule_context(instance=instance, repository_def=repo)
            ),
            repeat=3,
        )
    out = ROOT / "benchmarks" / "results" / "operations.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(results, indent=2))  # noqa: T201
    return 0


if __name__ == "__main__":
    sys.exit(main())
