"""The public release by URL: SHA-256 check, pin on first download, cache, and the asset using it."""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from argassets.argument_quality.assets import corpora
from argassets.argument_quality.corpus import CorpusError, find_corpus_files
from argassets.argument_quality.release import fetch_release
from argassets.argument_quality.resources import WebisSourceResource
from argassets.platform.paths import SAMPLE_DATA_DIR
from argassets.platform.resources.data import PublishedDataResource
from argassets.platform.resources.storage import duckdb_io_manager
from tests.judgments_http import Reply, ScriptedServer


def _release_zip() -> bytes:
    """A release-like archive of the sample corpus, in a folder layout of its own."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        for path in sorted((SAMPLE_DATA_DIR / "webis-argquality20").rglob("*.csv")):
            bundle.write(path, f"webis-argquality-20-release/{path.parent.name}/{path.name}")
        # The sample states its own counts (the real release is checked against 1,610 / 13,952).
        bundle.write(
            SAMPLE_DATA_DIR / "webis-argquality20" / "MANIFEST.json", "webis-argquality-20-release/MANIFEST.json"
        )
    return buffer.getvalue()


@pytest.fixture()
def release():
    payload = _release_zip()
    with ScriptedServer(
        lambda seen: (
            Reply(200, payload, {"Content-Type": "application/zip"}) if seen.path.startswith("/files/") else Reply(404)
        )
    ) as server:
        yield server, payload


def test_download_with_checksum_is_cached(tmp_path: Path, release):
    server, payload = release
    url = f"{server.url}/files/webis-argquality20.zip?download=1"
    digest = hashlib.sha256(payload).hexdigest()
    first = fetch_release(url, tmp_path / "cache", digest)
    assert first.downloaded and first.pinned and first.sha256 == digest
    files = find_corpus_files(first.folder)
    assert files.arguments.name == "webis-argquality20-arguments.csv"
    assert files.comparisons["logic"].parent.name == "raw"
    second = fetch_release(url, tmp_path / "cache", digest)
    assert not second.downloaded and second.folder == first.folder
    assert len(server.seen) == 1  # the second call was answered by the cache


def test_checksum_mismatch_keeps_nothing(tmp_path: Path, release):
    server, _ = release
    url = f"{server.url}/files/webis-argquality20.zip"
    with pytest.raises(CorpusError, match="SHA-256 mismatch: expected 0000"):
        fetch_release(url, tmp_path / "cache", "0" * 64)
    assert [p.name for p in (tmp_path / "cache").iterdir()] == []


def test_pin_on_first_download_then_verify(tmp_path: Path, release):
    server, payload = release
    url = f"{server.url}/files/webis-argquality20.zip"
    first = fetch_release(url, tmp_path / "cache")
    assert first.downloaded and not first.pinned
    assert first.sha256 == hashlib.sha256(payload).hexdigest()
    pin = first.archive.with_name(first.archive.name + ".sha256")
    assert pin.read_text().strip() == first.sha256
    # a corrupted cached copy no longer matches its pin: downloaded again
    first.archive.write_bytes(b"corrupted")
    again = fetch_release(url, tmp_path / "cache")
    assert again.downloaded and again.sha256 == first.sha256
    assert len(server.seen) == 2


def test_http_error_is_reported(tmp_path: Path, release):
    server, _ = release
    with pytest.raises(CorpusError, match="download failed with HTTP 404"):
        fetch_release(f"{server.url}/missing.zip", tmp_path / "cache")


def test_release_missing_a_file(tmp_path: Path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        bundle.writestr("x/webis-argquality20-arguments.csv", "Topic ID\n")
    payload = buffer.getvalue()
    with ScriptedServer(lambda seen: Reply(200, payload)) as server:
        fetched = fetch_release(f"{server.url}/r.zip", tmp_path / "cache")
    with pytest.raises(CorpusError, match="no file named 'webis-argquality20-raw-logical.csv'"):
        find_corpus_files(fetched.folder)


def test_corpus_asset_from_release_url(tmp_path: Path, release):
    server, payload = release
    database = tmp_path / "release.duckdb"
    source = WebisSourceResource(
        url=f"{server.url}/files/webis-argquality20.zip",
        sha256=hashlib.sha256(payload).hexdigest(),
        cache_dir=str(tmp_path / "downloads"),
    )
    result = dg.materialize(
        [corpora.webis_corpus],
        resources={
            "io_manager": duckdb_io_manager(str(database)),
            "data": PublishedDataResource(data_dir=str(tmp_path / "nowhere")),
            "webis_source": source,
        },
    )
    assert result.success
    metadata = result.asset_materializations_for_node("webis_corpus")[0].metadata
    assert metadata["source"].value == "release"
    assert metadata["checksum_configured"].value == "True"
    with duckdb.connect(str(database), read_only=True) as con:
        assert con.execute("select count(*) from webis_expert_comparisons").fetchone() == (105,)
