"""A damaged table is found by name and isolated, and the next run of its asset repairs it (issue 35, part 5).

One table file is cut short (truncated) or has bytes changed in place (a bad sector, a stray
write); DuckDB refuses the first and reads most of the second without a word. Either way:
``warehouse.connect()`` and ``argassets sql`` still open, ``SHOW TABLES`` and the other tables
answer, ``argassets sql`` names the damaged table on stderr and refuses a query that reads it, and
rewriting the asset (as its next run does) makes it whole again. For the DuckDB default (the
published copies) and for ``$ARGASSETS_TABLES`` (the Parquet store itself).
"""

from __future__ import annotations

import io
import os
import shutil
import struct
from pathlib import Path

import duckdb
import pytest

from argassets.platform.storage.reader_file import copy_warehouse
from argassets.platform.storage.table_health import DIGEST_ATTRIBUTE, find_damage
from argassets.platform.storage.warehouse import connect, published_dir
from argassets.platform.storage.warehouse_query import QueryError, run_query
from tests.platform.warehouse_fixtures import write_tables


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def flip(path: Path) -> None:
    """Change four bytes in the middle of the file, in place (the file keeps its inode)."""
    with open(path, "r+b") as handle:
        middle = path.stat().st_size // 2
        handle.seek(middle)
        chunk = handle.read(4)
        handle.seek(middle)
        handle.write(bytes(b ^ 0xFF for b in chunk))


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("written")
    write_tables(folder / "argassets.duckdb")
    write_tables(folder / "tables", parquet=True)
    return {"duckdb": folder / "argassets.duckdb", "parquet": folder / "tables"}


def _location(written: dict[str, Path], storage: str, tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the written storage: ``(what runs write to, the folder readers read)``."""
    if storage == "duckdb":
        database = tmp_path / "argassets.duckdb"
        copy_warehouse(written["duckdb"], database)
        return database, published_dir(database)
    tables = Path(shutil.copytree(written["parquet"], tmp_path / "tables"))
    for path in tables.rglob("data.parquet"):  # copytree (copy2) keeps the digests
        assert os.getxattr(path, DIGEST_ATTRIBUTE)
    return tables, tables


@pytest.mark.parametrize("storage", ["duckdb", "parquet"])
@pytest.mark.parametrize(("damage", "table", "file"), [(truncate, "votes", "judge_model=a"), (flip, "scores", "")])
def test_a_damaged_table_is_named_the_others_stay_readable_and_its_next_run_repairs_it(
    written: dict[str, Path], tmp_path: Path, storage: str, damage, table: str, file: str
) -> None:
    target, tables = _location(written, storage, tmp_path)
    damaged_file = tables / table / file / "data.parquet" if file else tables / table / "data.parquet"
    assert find_damage(tables / table, "data.parquet") == []
    damage(damaged_file)

    with connect(tables) as reader:
        assert [d.table for d in reader.damaged] == [table]
        assert reader.sql("SHOW TABLES").fetchall() == [(t,) for t in ("scores", "votes") if t != table]
        other = "votes" if table == "scores" else "scores"
        assert reader.sql(f"SELECT count(*) FROM {other}").fetchall() == [(20 if other == "votes" else 3,)]

    err = io.StringIO()
    out = io.StringIO()
    assert run_query("SHOW TABLES", location=str(tables), out=out, err=err) == 0
    warning = err.getvalue()
    assert warning.startswith(f"argassets sql: warning: table '{table}'") and str(damaged_file) in warning
    assert f"The next run of asset '{table}' rewrites it" in warning and warning.count("\n") == 1
    with pytest.raises(QueryError, match=f"table '{table}'.*not read. Materialise asset '{table}' again"):
        run_query(f"SELECT * FROM {table}", location=str(tables), out=out, err=io.StringIO())

    # The next run of its asset rewrites the file whole.
    write_tables(target, parquet=storage == "parquet", only=table)
    with connect(tables) as reader:
        assert reader.damaged == []
        rows = reader.sql(f"SELECT count(*) FROM {table}").fetchall()
    assert rows == [(20 if table == "votes" else 3,)]


def test_changed_bytes_are_found_by_the_digest_even_where_duckdb_reads_on(
    written: dict[str, Path], tmp_path: Path
) -> None:
    # A float changed inside a data page: DuckDB reads the file and returns the wrong value.
    _, tables = _location(written, "duckdb", tmp_path)
    path = tables / "scores" / "data.parquet"
    data = path.read_bytes()
    at = data.find(struct.pack("<d", 0.125))
    assert at > 0, "the 0.125 of the table is stored as a plain double"
    with open(path, "r+b") as handle:  # in place, as a stray write would
        handle.seek(at)
        handle.write(struct.pack("<d", 2.0))
    with duckdb.connect() as plain:
        read = plain.execute(f"SELECT score FROM read_parquet('{path}') ORDER BY score").fetchall()
    assert read == [(0.25,), (0.5,), (2.0,)], "DuckDB alone reads the changed value"
    with connect(tables) as reader:
        assert [(d.table, d.reason) for d in reader.damaged] == [
            ("scores", "its bytes changed since it was written (SHA-256 differs)")
        ]


def test_a_file_without_a_digest_is_checked_by_its_footer(written: dict[str, Path], tmp_path: Path) -> None:
    # Copied without extended attributes, or written before digests: a cut is still found.
    _, tables = _location(written, "duckdb", tmp_path)
    path = tables / "votes" / "judge_model=b" / "data.parquet"
    os.removexattr(path, DIGEST_ATTRIBUTE)
    assert find_damage(tables / "votes", "data.parquet") == []
    truncate(path)
    [found] = find_damage(tables / "votes", "data.parquet")
    assert found.file == path and found.reason.startswith("not a readable Parquet file")
    assert found.describe().startswith("table 'votes' (partition judge_model=b): not a readable Parquet file")
