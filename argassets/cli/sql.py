"""``argassets sql QUERY``: one read-only query over the results' Parquet copies (safe while runs write)."""

from __future__ import annotations

import argparse
from typing import Any

from argassets.cli.common import CliError

SQL_HELP = (
    "run one read-only query (a SELECT) over the results' Parquet copies, safe while runs write; "
    "it cannot write, attach, copy, create or read other files (docs/operations.md)"
)


def cmd_sql(args: argparse.Namespace) -> int:
    """One read-only query over the published tables (never the DuckDB file a run writes)."""
    from argassets.platform.storage.warehouse_query import QueryError, run_query

    try:
        return run_query(args.query, csv=args.csv, max_rows=args.max_rows)
    except QueryError as exc:
        raise CliError(str(exc)) from None


def add_command(sub: Any) -> None:
    """Register ``argassets sql``."""
    sql = sub.add_parser("sql", help=SQL_HELP, description=SQL_HELP)
    sql.add_argument("query", help='one SELECT, e.g. "SHOW TABLES" or "SELECT * FROM aq_bt_scores LIMIT 5"')
    sql.add_argument(
        "--csv",
        action="store_true",
        help="print every row as CSV, streamed (instead of a table, which shows every column)",
    )
    sql.add_argument("--max-rows", type=int, default=40, help="rows shown in the table, 1 or more (default 40)")
    sql.set_defaults(func=cmd_sql)
