"""``argassets export eee | hf`` and ``argassets open``: results leave in the field's formats, pages open.

Registered by ``argassets/cli/__init__.py`` (:func:`add_commands`). The exports read the stored tables
(never the DuckDB file a run writes) and are validated by the formats' own validators before the
command returns (docs/exports.md)::

    argassets export eee [--study S] [--model M] [--out DIR]               # Every Eval Ever records
    argassets export hf --study S [--model M] [--report R ...] [--out DIR]  # Parquet + card + Croissant
    argassets open [PAGE] [--print]                                         # a results page, found now
"""

from __future__ import annotations

import argparse
import sys
import webbrowser
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _out(line: str) -> None:
    print(line, flush=True)  # noqa: T201


def _exports(study: str | None) -> list[Any]:
    from argassets.platform.reporting.exports.studies import study_export
    from argassets.platform.study import study_names

    return [study_export(name) for name in ([study] if study else study_names())]


def _read(name: str) -> Any:
    from argassets.platform.resources.storage import read_stored_table

    return read_stored_table(name)


def cmd_export_eee(args: argparse.Namespace) -> int:
    from argassets.platform.registry.entries import load_registry
    from argassets.platform.reporting.exports.bundle import export_eee

    root = Path(args.out or "exports/eee")
    written = export_eee(_exports(args.study), _read, load_registry(), root, args.model)
    _out(f"{len(written)} Every Eval Ever record(s) under {root}/data, each passed EEE's validator")
    return 0


def cmd_export_hf(args: argparse.Namespace) -> int:
    from argassets.platform.reporting.exports.bundle import export_hf

    [export] = _exports(args.study)
    root = Path(args.out or f"exports/hf/{args.study}" + (f"-{args.model}" if args.model else ""))
    written = export_hf(export, _read, root, args.model, args.report or None)
    _out(f"{len(written)} file(s) under {root} (Parquet, README.md, croissant.json); mlcroissant validated it")
    return 0


def cmd_open(args: argparse.Namespace) -> int:
    from argassets.platform.operations.remedies import missing
    from argassets.platform.reporting.pages import find_page, list_pages, reports_dir

    if not args.page:
        pages = list_pages()
        for page in pages:
            _out(str(page))
        if not pages:
            _out(missing(f"no results pages in {reports_dir()}"))
        return 0
    page = find_page(args.page)
    _out(str(page))
    if not args.print_only:
        webbrowser.open(page.as_uri())
    return 0


def _guarded(command: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Errors of the export and page code shown as one line (exit status 2)."""

    def run(args: argparse.Namespace) -> int:
        from argassets.platform.reporting.exports.bundle import ExportError
        from argassets.platform.reporting.exports.eee_validator import ValidatorUnavailableError
        from argassets.platform.reporting.exports.hf import CroissantError

        try:
            return command(args)
        except (ExportError, ValidatorUnavailableError, CroissantError, LookupError, ValueError) as exc:
            print(f"argassets: error: {exc}", file=sys.stderr)  # noqa: T201
            return 2

    return run


def add_commands(sub: Any) -> None:
    """Add ``export`` and ``open`` to the ``argassets`` subcommands."""
    from argassets.platform.study import study_names

    export = sub.add_parser("export", help="results in the field's formats (Every Eval Ever, Hugging Face + Croissant)")
    esub = export.add_subparsers(dest="export_command", required=True)
    eee = esub.add_parser("eee", help="Every Eval Ever records, one per (study, model), validated by EEE's validator")
    eee.add_argument("--study", choices=study_names(), help="one study (default: every study)")
    eee.add_argument("--model", help="one model or system of the reports (e.g. random, E1)")
    eee.add_argument("--out", help="folder (default exports/eee); files go to data/<collection>/<developer>/<model>/")
    eee.set_defaults(func=_guarded(cmd_export_eee))
    hf = esub.add_parser(
        "hf", help="a Hugging Face dataset folder: Parquet, dataset card, Croissant (mlcroissant-validated)"
    )
    hf.add_argument("--study", choices=study_names(), required=True, help="the study to export")
    hf.add_argument("--model", help="one model: its judgments (tidy, importable again) and its report rows")
    hf.add_argument("--report", action="append", help="a report table to include (repeatable; default: the study's)")
    hf.add_argument("--out", help="folder (default exports/hf/<study>[-<model>])")
    hf.set_defaults(func=_guarded(cmd_export_hf))

    page = sub.add_parser("open", help="open a results page (found in reports/ beside the DuckDB file, now)")
    page.add_argument("page", nargs="?", help="e.g. aq_results, political_results (default: list them)")
    page.add_argument("--print", dest="print_only", action="store_true", help="print the path, do not open a browser")
    page.set_defaults(func=_guarded(cmd_open))
