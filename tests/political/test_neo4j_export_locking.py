"""One Neo4j export at a time, and no mixed graph visible: concurrent exports, a lease left by a dead
exporter, and the real server process killed mid-export, restarted on its data, the export re-run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from argassets.political import neo4j_export as nx
from argassets.political import neo4j_graph as ng
from argassets.political import neo4j_lock as nl
from tests.kb_fixtures import SCRIPT
from tests.political.test_neo4j_export import small_kb

pytestmark = [pytest.mark.neo4j, pytest.mark.concurrency]

VISIBLE = (
    "MATCH (a:Argument) WITH count(a) AS nodes, collect(DISTINCT a.kb_export) AS stamps, "
    "collect(DISTINCT a.variant) AS variants "
    "OPTIONAL MATCH (:Argument)-[r]->(:Argument) RETURN nodes, stamps, variants, count(r) AS relationships"
)


def variant_kb(name: str, n: int = 40) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A small KB whose every node says which variant it belongs to."""
    arguments = pd.DataFrame(
        {"argument_id": [f"A{i}" for i in range(n)], "variant": name, "proposition": [f"{name} {i}" for i in range(n)]}
    )
    relations = pd.DataFrame(
        [(f"A{i}", f"A{i + 1}", "TRANSITIONS_TO", f"T{i}", "ns") for i in range(n - 1)]
        + [(f"A{i}", f"A{i + 2}", "SUPPORTS", f"R{i}", "ns") for i in range(0, n - 2, 3)],
        columns=["source_id", "target_id", "relation", "aif_node_id", "nodeset"],
    )
    return arguments, relations


LIVE = "OPTIONAL MATCH (k:KbExport {name: 'political_kb'}) RETURN k.live_stamp AS stamp"


def visible(driver, database: str) -> tuple[int, list, list, int]:
    with driver.session(database=database) as session:
        record = session.execute_read(lambda tx: tx.run(VISIBLE).single())
    return record["nodes"], sorted(record["stamps"]), sorted(record["variants"]), record["relationships"]


def snapshot(driver, database: str) -> tuple[tuple, bool]:
    """The visible graph, and whether no switch committed while it was read.

    Neo4j reads at read-committed isolation, so one read can straddle a switch; the live stamp read
    before and after tells. Between two switches nothing touches the Argument nodes or their
    relationships (staging and pruning work on other labels), so an unstraddled read is exact.
    """

    def read(tx):
        before = tx.run(LIVE).single()["stamp"]
        record = tx.run(VISIBLE).single()
        after = tx.run(LIVE).single()["stamp"]
        graph = (record["nodes"], sorted(record["stamps"]), sorted(record["variants"]), record["relationships"])
        return graph, before == after

    with driver.session(database=database) as session:
        return session.execute_read(read)


def test_two_concurrent_exports_run_one_after_the_other_and_readers_never_see_a_mixed_graph(neo4j_driver, neo4j_server):
    db = neo4j_server.database
    kb = {name: variant_kb(name) for name in ("left", "right")}
    expected_relationships = len(kb["left"][1])
    nx.export_kb(neo4j_driver, db, *variant_kb("before"))
    results: dict[str, nx.ExportResult] = {}
    errors: list[BaseException] = []
    snapshots: list[tuple] = []
    done = threading.Event()

    def export(name: str) -> None:
        try:
            driver = ng.connect(ng.Neo4jSettings(neo4j_server.uri, neo4j_server.user, neo4j_server.password, db))
            try:  # small batches, so that both exports are in flight together
                results[name] = nx.export_kb(driver, db, *kb[name], batch_size=3, lock_wait_s=120)
            finally:
                driver.close()
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    straddled: list[tuple] = []

    def read() -> None:
        while not done.is_set():
            graph, clean = snapshot(neo4j_driver, db)
            (snapshots if clean else straddled).append(graph)

    reader = threading.Thread(target=read)
    reader.start()
    threads = [threading.Thread(target=export, args=(name,)) for name in kb]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    done.set()
    reader.join(timeout=60)
    assert not errors, errors
    left, right = results["left"], results["right"]
    # one export waited for the other's lease (their lock spans did not overlap)
    assert max(left.lock_wait_s, right.lock_wait_s) > 0.5
    # every snapshot is one complete graph: 40 nodes of one variant and one stamp, all relationships
    # (a read that straddled one of the two switches is set aside: at most a few)
    assert len(snapshots) > 3 and len(straddled) <= 4
    for nodes, stamps, variants, relationships in snapshots:
        assert nodes == 40 and len(stamps) == 1 and len(variants) == 1 and relationships == expected_relationships, (
            snapshots
        )
    seen = [s[2][0] for s in snapshots]
    assert seen[0] == "before" and set(seen) <= {"before", "left", "right"}
    final = visible(neo4j_driver, db)
    last = max((left, right), key=lambda r: r.lock_wait_s)  # the one that waited switched last
    assert final[1] == [last.stamp] and final[0] == 40
    assert nl.lock_state(neo4j_driver, db)["live_stamp"] == last.stamp
    records, _, _ = neo4j_driver.execute_query(
        "MATCH (n) WHERE NOT n:Argument AND NOT n:KbExport RETURN count(n) AS n", database_=db
    )
    assert records[0]["n"] == 0


def test_a_lease_is_exclusive_until_released_or_expired(neo4j_driver, neo4j_server):
    db = neo4j_server.database
    ng.ensure_constraints(neo4j_driver, db)
    assert nl.acquire_lock(neo4j_driver, db, "holder-a", lease_s=60, wait_s=0) == pytest.approx(0, abs=1)
    with pytest.raises(nl.ExportLockedError, match=r"another Neo4j export \(holder-a, since .*\) holds the lock"):
        nl.acquire_lock(neo4j_driver, db, "holder-b", lease_s=60, wait_s=1, poll_s=0.2)
    arguments, relations = small_kb()
    with pytest.raises(nl.ExportLockedError):
        nx.export_kb(neo4j_driver, db, arguments, relations, lock_wait_s=1)
    assert ng.graph_counts(neo4j_driver, db)["Argument"] == 0
    assert nl.release_lock(neo4j_driver, db, "holder-a")
    # a holder that died keeps its lease until it expires; then another export takes it over
    nl.acquire_lock(neo4j_driver, db, "dead-holder", lease_s=2, wait_s=0)
    result = nx.export_kb(neo4j_driver, db, arguments, relations, lock_wait_s=30)
    assert 0.5 < result.lock_wait_s < 30
    assert ng.graph_counts(neo4j_driver, db) == ng.expected_counts(arguments, relations)
    # the dead holder's renewal now fails: it cannot switch anything
    with pytest.raises(nl.LeaseLostError):
        nl.renew_lock(neo4j_driver, db, "dead-holder")


def test_a_counts_mismatch_switches_nothing(neo4j_driver, neo4j_server, monkeypatch):
    db = neo4j_server.database
    before = variant_kb("before")
    nx.export_kb(neo4j_driver, db, *before)
    real = nx.staged_counts

    def short(driver, database, stamp):
        counts = real(driver, database, stamp)
        return {**counts, "SUPPORTS": counts["SUPPORTS"] - 1}

    monkeypatch.setattr(nx, "staged_counts", short)
    with pytest.raises(nx.CountsMismatchError, match="not switched"):
        nx.export_kb(neo4j_driver, db, *variant_kb("after"))
    assert visible(neo4j_driver, db)[2] == ["before"]
    assert "lock_holder" not in nl.lock_state(neo4j_driver, db)


# ---------------------------------------------------------------------------------- the real server killed


@pytest.fixture()
def own_server(tmp_path: Path):
    """A Neo4j server of this test's own (it gets killed), stopped at the end."""
    state = tmp_path / "neo4j"
    env = {**os.environ, "NEO4J_TEST_HEAP": "512m"}
    started = subprocess.run(
        [sys.executable, str(SCRIPT), "start", "--state-dir", str(state)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    if started.returncode != 0:
        pytest.fail(f"could not start a Neo4j server:\n{started.stdout}\n{started.stderr}")
    try:
        yield state, env
    finally:
        subprocess.run(
            [sys.executable, str(SCRIPT), "stop", "--state-dir", str(state)], capture_output=True, timeout=120
        )


def _settings(state: Path) -> ng.Neo4jSettings:
    info = json.loads((state / "connection.json").read_text())
    return ng.Neo4jSettings(info["uri"], info["user"], info["password"], info["database"])


def _kill_and_wait(pid: int) -> None:
    """SIGKILL the server and wait (at most 30 s) until it is gone or a zombie."""
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        if (
            Path(f"/proc/{pid}/stat").exists()
            and Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"
        ):
            break
        time.sleep(0.1)


@pytest.mark.slow
def test_server_killed_mid_export_then_restarted_and_export_rerun(own_server):
    state, env = own_server
    settings = _settings(state)
    db = settings.database
    pid = json.loads((state / "connection.json").read_text())["pid"]
    driver = ng.connect(settings)
    first = nx.export_kb(driver, db, *variant_kb("before", 300), batch_size=50)

    class KillWhenNodesStaged(nx.ExportHooks):
        """Mid-export: the server is killed once the nodes are written, before any relationship."""

        def before_batch(self, batches_written: int) -> None:
            if batches_written == 300 // 50:
                _kill_and_wait(pid)

    with pytest.raises(Exception) as crashed:  # the driver's error when the server vanishes
        nx.export_kb(driver, db, *variant_kb("after", 300), batch_size=50, lease_s=5, hooks=KillWhenNodesStaged())
    assert not isinstance(crashed.value, nx.CountsMismatchError)
    driver.close()

    restarted = subprocess.run(
        [sys.executable, str(SCRIPT), "start", "--keep-data", "--state-dir", str(state)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert restarted.returncode == 0, restarted.stderr
    driver = ng.connect(_settings(state))
    try:
        # after the crash the visible graph is the previous export, complete; the staged part is invisible
        nodes, stamps, variants, relationships = visible(driver, db)
        assert (nodes, stamps, variants) == (300, [first.stamp], ["before"])
        assert relationships == len(variant_kb("before", 300)[1])
        records, _, _ = driver.execute_query("MATCH (n:ArgumentStaging) RETURN count(n) AS n", database_=db)
        assert records[0]["n"] == 300
        # the re-run waits out the dead export's lease (5 s), clears its leftovers and switches
        rerun = nx.export_kb(driver, db, *variant_kb("after", 300), batch_size=50, lock_wait_s=60)
        assert rerun.leftover_nodes_removed == 300
        assert visible(driver, db)[:3] == (300, [rerun.stamp], ["after"])
        assert ng.graph_counts(driver, db) == ng.expected_counts(*variant_kb("after", 300))
        records, _, _ = driver.execute_query(
            "MATCH (n) WHERE NOT n:Argument AND NOT n:KbExport RETURN count(n) AS n", database_=db
        )
        assert records[0]["n"] == 0
    finally:
        driver.close()
