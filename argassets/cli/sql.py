"""``argassets sql QUERY``: one DuckDB query over the results' Parquet copies (safe while runs write)."""

from __future__ import annotations

import argparse
import shutil
import sys
from typing import Any

from argassets.cli.common import CliError


def cmd_sql(args: argparse.Namespace) -> int:
    """One query over the published tables (never the DuckDB file a run writes)."""
    import duckdb

    from argassets.platform.storage.warehouse import connect

    try:
        with connect() as connection:
            relation = connection.sql(args.query)
            if relation is None:
                return 0
            if args.csv:
                relation.df().to_csv(sys.stdout, index=False)
            else:
                relation.show(max_rows=args.max_rows, max_width=shutil.get_terminal_size().columns)
    except (FileNotFoundError, duckdb.Error) as exc:
        raise CliError(str(exc)) from None
    return 0


def add_command(sub: Any) -> None:
    """Register ``argassets sql``."""
    sql = sub.add_parser(
        "sql", help="run one DuckDB query over the results (their Parquet copies: safe while runs write)"
    )
    sql.add_argument("query", help='e.g. "SHOW TABLES" or "SELECT * FROM aq_bt_scores LIMIT 5"')
    sql.add_argument("--csv", action="store_true", help="print every row as CSV instead of a table")
    sql.add_argument("--max-rows", type=int, default=40, help="rows shown in the table (default 40)")
    sql.set_defaults(func=cmd_sql)
