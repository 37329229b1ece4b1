"""Materialise from the Dagster UI, in a real browser (Debian's Chromium driven by Playwright).

``argassets ui`` (``dagster dev``, bound to 127.0.0.1 by default, checked) runs on a free port
with a temporary ``DAGSTER_HOME`` (the local
instance config of deploy/local/dagster.yaml), on the embedded sample corpus. The test opens the
asset graph, selects ``aq_judgments`` and launches its ``random`` partition (the partition dialog),
then materialises ``aq_majority_votes`` and the ``aq_variability_report`` report from their asset pages, waits for each
run to succeed, and checks that the report's Markdown table is shown on its asset page and that
DuckDB holds the rows. Secrets set in the environment of ``dagster dev`` never show in the pages.
Screenshots go to the test's folder and to ``test-output/`` (git-ignored).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from tests.cli_home import cli_environment

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
SAMPLE = ROOT / "data" / "sample"
OUTPUT = ROOT / "test-output" / "ui"
NEO4J_SECRET = "ui-neo4j-SECRET-7731"
OPENAI_SECRET = "sk-ui-openai-SECRET-5512"
RUN_TIMEOUT_S = 240

REGISTRY = """
[[models]]
name = "longer-wins"
backend = "longer-wins"
studies = ["argument_quality"]

[[models]]
name = "random"
backend = "random"
studies = ["argument_quality"]
seed = 1
"""

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(600)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url: str, process: subprocess.Popen, log: Path, timeout_s: float = 180) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"dagster dev exited early:\n{log.read_text()[-4000:]}")
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(1)
    pytest.fail(f"dagster dev did not answer at {url}:\n{log.read_text()[-4000:]}")


def _listen_addresses(port: int) -> set[str]:
    """Local addresses listening on ``port`` (Linux ``/proc/net/tcp*``), e.g. ``{"127.0.0.1"}``."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            address, port_hex = fields[1].split(":")
            if fields[3] != "0A" or int(port_hex, 16) != port:  # 0A = LISTEN
                continue
            if len(address) == 8:
                found.add(socket.inet_ntop(socket.AF_INET, bytes.fromhex(address)[::-1]))
            else:
                words = [bytes.fromhex(address[i : i + 8])[::-1] for i in range(0, 32, 8)]
                found.add(socket.inet_ntop(socket.AF_INET6, b"".join(words)))
    return found


class Instance:
    """Reads the same instance as the webserver (SQLite, read by a second process)."""

    def __init__(self, home: Path):
        self.home = home

    def runs(self) -> list[dg.DagsterRun]:
        previous = os.environ.get("DAGSTER_HOME")
        os.environ["DAGSTER_HOME"] = str(self.home)
        try:
            with dg.DagsterInstance.get() as instance:
                return list(instance.get_runs())
        finally:
            if previous is None:
                os.environ.pop("DAGSTER_HOME", None)
            else:
                os.environ["DAGSTER_HOME"] = previous

    def wait_for_new_run(self, known: set[str], label: str) -> dg.DagsterRun:
        deadline = time.monotonic() + RUN_TIMEOUT_S
        while time.monotonic() < deadline:
            new = [r for r in self.runs() if r.run_id not in known]
            if new and new[0].is_finished:
                run = new[0]
                assert run.status == dg.DagsterRunStatus.SUCCESS, f"{label}: run {run.run_id} ended {run.status}"
                return run
            time.sleep(2)
        pytest.fail(f"{label}: no finished run after {RUN_TIMEOUT_S} s")


@pytest.fixture(scope="module")
def ui(chromium: Path, tmp_path_factory: pytest.TempPathFactory, study_a_inputs_home: Path):
    tmp = tmp_path_factory.mktemp("ui")
    # Sensors and schedules start stopped (automation off): every run of this test is launched from the UI.
    # The partitions and the corpus tables come from the CLI (tested in test_cli_backfill.py); the
    # tables, materialised once per session by `dagster asset materialize`, are copied. The runs'
    # steps run in the run's process: the import of the code location per step is not under test.
    env = cli_environment(
        tmp,
        REGISTRY,
        without=("ARGASSETS_", "DAGSTER_", "NEO4J_"),
        inputs=study_a_inputs_home,
        ARGASSETS_EXECUTOR="in_process",
        NEO4J_URI="bolt://127.0.0.1:1",
        NEO4J_USER="neo4j",
        NEO4J_PASSWORD=NEO4J_SECRET,
        ARGASSETS_OPENAI_API_KEY=OPENAI_SECRET,
    )
    home = Path(env["DAGSTER_HOME"])
    done = subprocess.run(
        [str(BIN / "argassets"), "partitions", "sync"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]

    port = free_port()
    log = tmp / "dagster-dev.log"
    # `argassets ui` = dagster dev with the project's workspace, bound to 127.0.0.1 by default.
    process = subprocess.Popen(
        [str(BIN / "argassets"), "ui", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        wait_http(f"http://127.0.0.1:{port}/server_info", process, log)
        assert _listen_addresses(port) == {"127.0.0.1"}, "the webserver must listen on 127.0.0.1 only"
        yield {"url": f"http://127.0.0.1:{port}", "tmp": tmp, "home": home, "env": env, "log": log}
    finally:
        for sig, wait_s in ((signal.SIGINT, 20), (signal.SIGTERM, 10), (signal.SIGKILL, 5)):
            try:
                os.killpg(process.pid, sig)
            except ProcessLookupError:
                break
            try:
                process.wait(timeout=wait_s)
                time.sleep(1)
                os.killpg(process.pid, 0)  # children left in the group?
            except subprocess.TimeoutExpired:
                continue
            except ProcessLookupError:
                break


def test_materialise_a_judgments_partition_and_a_report_from_the_ui(ui, chromium: Path, tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    base = ui["url"]
    instance = Instance(ui["home"])
    known = {r.run_id for r in instance.runs()}
    OUTPUT.mkdir(parents=True, exist_ok=True)
    pages_text: list[str] = []

    def shot(page, name: str) -> None:
        path = tmp_path / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        shutil.copy(path, OUTPUT / path.name)

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(chromium), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(60_000)
        # The one-time "join the community" prompt covers the page whenever it shows up: skip it.
        page.add_locator_handler(
            page.get_by_text("Join the Dagster community"),
            lambda _: page.get_by_role("button", name="Skip").click(),
        )
        try:
            # 1. The asset graph of the judgments group; select aq_judgments; launch partition "random".
            page.goto(f"{base}/locations/argassets/asset-groups/judgments", wait_until="networkidle")
            page.get_by_text("aq_judgments", exact=True).first.click()
            page.locator("button", has_text="Materialize selected").first.click()
            dialog = page.get_by_role("dialog").filter(has_text="Launch runs to materialize")
            expect(dialog).to_contain_text("Launch runs to materialize aq_judgments")
            dialog.get_by_text("Select a partition or create one").click()
            page.get_by_placeholder("Filter partitions").fill("random")
            page.locator("label", has_text="random").first.click()
            dialog.get_by_text("Launch runs to materialize aq_judgments").click()  # close the picker
            expect(dialog).to_contain_text("1 partition")
            shot(page, "01-partition-dialog")
            dialog.get_by_role("button", name="Launch 1 run").click()
            judged = instance.wait_for_new_run(known, "aq_judgments[random]")
            known.add(judged.run_id)
            assert judged.tags["dagster/partition"] == "random"
            # the run-tag policy of the instance's queue: the tags the sensor and the CLI give
            assert judged.tags["argassets/model"] == "random"
            assert judged.tags["argassets/study"] == "argument_quality"
            assert judged.tags["argassets/backend"] == "random"
            page.goto(f"{base}/runs/{judged.run_id}", wait_until="networkidle")
            expect(page.get_by_text("Success").first).to_be_visible()
            pages_text.append(page.content())
            shot(page, "02-judgments-run")

            # 2. The per-model aggregate and a report over all partitions, each from its asset page (the
            # group graphs have grown wider than any viewport, so a node may sit out of reach there).
            for key in ("aq_majority_votes", "aq_variability_report"):
                page.goto(f"{base}/assets/{key}", wait_until="networkidle")
                page.locator("button").filter(has_text=re.compile(r"^\s*Materialize\s*$")).first.click()
                run = instance.wait_for_new_run(known, key)
                known.add(run.run_id)

            # 3. The report's Markdown table, on its asset page.
            page.goto(f"{base}/assets/aq_variability_report", wait_until="networkidle")
            show = page.get_by_text("[Show Markdown]")
            table = page.locator("table", has_text="random").last
            # The metadata renders after the page's queries (seconds under load; expect's own default
            # is 5 s): wait for it before asking which form it took.
            expect(show.or_(table).first).to_be_visible(timeout=60_000)
            if show.count():  # long Markdown opens in a dialog; short Markdown is inline
                show.first.click()
            expect(table).to_be_visible(timeout=60_000)
            table_text = table.inner_text()
            pages_text.append(page.content())
            shot(page, "03-report")

            # 4. Secrets configured through the environment show as names, never as values.
            page.goto(f"{base}/locations/argassets/resources/neo4j", wait_until="networkidle")
            expect(page.get_by_text("NEO4J_PASSWORD").first).to_be_visible()
            pages_text.append(page.content())
            shot(page, "04-neo4j-resource")
        finally:
            shot(page, "99-last")
            browser.close()

    assert "random" in table_text
    for text in pages_text:
        assert NEO4J_SECRET not in text and OPENAI_SECRET not in text

    with duckdb.connect(ui["env"]["ARGASSETS_DUCKDB"], read_only=True) as con:
        judgments = con.execute("SELECT judge_model, count(*) FROM main.aq_judgments GROUP BY 1").fetchall()
        prompts = con.execute("SELECT count(*) FROM main.aq_prompts").fetchone()[0]
        report = con.execute("SELECT * FROM main.aq_variability_report").df()
    assert judgments == [("random", prompts * 3)]
    assert len(report) > 0
    assert set(report.astype(str).to_numpy().ravel()) & {"random"}, "the report has the random judge's rows"
    log_text = ui["log"].read_text(errors="replace")
    assert NEO4J_SECRET not in log_text and OPENAI_SECRET not in log_text
