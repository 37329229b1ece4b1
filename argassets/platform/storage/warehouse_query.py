"""``argassets sql``: one read-only query over the published tables, printed as a table or CSV.

Everything the command does lives here (the CLI only passes its options): the read-only guards of
:func:`argassets.platform.storage.warehouse.connect`, a warning per damaged table (left out, the
others readable), a refusal to read a damaged table the query names, CSV streamed batch by batch
(a result of 100 M rows is never held whole), and a quiet end when the reader of the output goes
away (``| head -1``). Errors are one line (:class:`QueryError`).
"""

from __future__ import annotations

import os
import sys
from typing import TextIO

import duckdb

from argassets.platform.storage.table_health import Damage
from argassets.platform.storage.warehouse import (
    ReadOnlyConnection,
    RefusedQuery,
    check_read_only,
    connect,
    named_tables,
)

__all__ = ["BROKEN_PIPE_STATUS", "CSV_BATCH_ROWS", "QueryError", "damage_warning", "run_query"]

#: Rows per batch when streaming CSV.
CSV_BATCH_ROWS = 50_000
#: Exit status after the output's reader went away (as a process killed by SIGPIPE: 128 + 13).
BROKEN_PIPE_STATUS = 141


class QueryError(RuntimeError):
    """A query that could not run, in one line."""


def damage_warning(damage: Damage) -> str:
    """The warning line of a damaged table: what, and what rewrites it."""
    return (
        f"warning: {damage.describe()}; left out, the other tables stay readable. "
        f"The next run of asset '{damage.table}' rewrites it (argassets materialize / backfill, or the UI)"
    )


def _one_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _refuse_damaged(connection: ReadOnlyConnection, query: str) -> None:
    """A query naming a damaged table fails naming it (instead of 'table does not exist')."""
    named = named_tables(query)
    for damage in connection.damaged:
        if damage.table in named:
            raise QueryError(f"{damage.describe()}: not read. Materialise asset '{damage.table}' again to rewrite it")


def _write_csv(connection: ReadOnlyConnection, query: str, out: TextIO) -> None:
    reader = connection.sql(query).fetch_record_batch(CSV_BATCH_ROWS)
    header = True
    for batch in reader:
        batch.to_pandas(integer_object_nulls=True).to_csv(out, header=header, index=False)
        header = False
    if header:  # no rows: the header alone
        reader.schema.empty_table().to_pandas().to_csv(out, index=False)


#: Every column is shown (a wide table wraps, or scrolls in ``less -S``): DuckDB fitted the table
#: to the terminal's width by hiding columns, which a reader did not notice.
_NO_WIDTH_LIMIT = 1_000_000


def _show(connection: ReadOnlyConnection, query: str, max_rows: int, out: TextIO) -> None:
    stdout = sys.stdout
    sys.stdout = out  # DuckDB's show() prints through Python's sys.stdout
    try:
        connection.sql(query).show(max_rows=max_rows, max_width=_NO_WIDTH_LIMIT)
    finally:
        sys.stdout = stdout


def _quiet_after_broken_pipe(out: TextIO) -> None:
    """The reader of ``out`` is gone: send what is left (and Python's final flush) nowhere."""
    try:
        target = out.fileno()
    except (AttributeError, OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, target)
    os.close(devnull)


def run_query(
    query: str,
    *,
    csv: bool = False,
    max_rows: int = 40,
    location: str | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Run one read-only query and print its result; returns the exit status.

    Raises :class:`QueryError` (one line) for a bad option, a refused or failing statement, a
    damaged table it names, or no published tables.
    """
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    if max_rows < 1:
        raise QueryError(f"--max-rows must be 1 or more, got {max_rows}")
    try:
        with connect(location) as connection:
            for damage in connection.damaged:
                print(f"argassets sql: {damage_warning(damage)}", file=err, flush=True)  # noqa: T201
            check_read_only(query)
            _refuse_damaged(connection, query)
            if csv:
                _write_csv(connection, query, out)
            else:
                _show(connection, query, max_rows, out)
            out.flush()
    except BrokenPipeError:
        _quiet_after_broken_pipe(out)
        return BROKEN_PIPE_STATUS
    except (RefusedQuery, OSError, duckdb.Error) as exc:  # OSError: DuckDB's errors through the Arrow stream
        raise QueryError(_one_line(exc)) from None
    return 0
