"""A study's results page: one self-contained HTML file that opens offline and can be shared."""

from __future__ import annotations

import html
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

#: Row kinds that can be "best" unless a table says otherwise: what the platform measured itself.
BEST_KINDS = ("measured", "model", "ensemble")


@dataclass(frozen=True)
class Leaderboard:
    """One table of the page: ``keys`` name a row, ``headline`` ranks them, ``others`` are one click away."""

    title: str
    frame: pd.DataFrame
    keys: Sequence[str]
    #: The metric the table is ranked by (``None``: a table of facts, kept in its order, no "best").
    headline: str | None
    #: What the headline metric is, in one sentence shown above the table.
    headline_says: str = ""
    others: Sequence[str] = ()
    kind_column: str = "kind"
    #: Kinds a best row may have; a boolean column of the frame marks best instead when given.
    best_kinds: Sequence[str] = BEST_KINDS
    best_column: str | None = None
    #: The badge of a marked row (``best``, or ``best set`` when the column marks a set).
    best_label: str = "best"
    note: str = ""


@dataclass(frozen=True)
class Section:
    """A heading, a paragraph, then tables and Plotly figures."""

    title: str
    text: str = ""
    tables: Sequence[Leaderboard] = ()
    figures: Sequence[Any] = field(default_factory=tuple)


def _best_mask(board: Leaderboard, frame: pd.DataFrame) -> pd.Series:
    """The best row(s): the board's column, or the highest headline among rows of a best kind."""
    if board.best_column is not None:
        return frame[board.best_column].fillna(False).astype(bool)
    none = pd.Series(False, index=frame.index)
    if board.headline is None or board.kind_column not in frame.columns:
        return none
    values = pd.to_numeric(frame[board.headline], errors="coerce")
    eligible = frame[board.kind_column].isin(board.best_kinds) & values.notna()
    if not eligible.any():
        return none
    return eligible & (values == values[eligible].max())


def _missing(value: Any) -> bool:
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def _cell(value: Any, classes: str, interval: tuple[Any, Any] | None = None) -> str:
    """A cell showing ``value`` (floats to 3 decimals, with its interval when given) and its raw
    value for sorting in ``data-v``."""
    if _missing(value):
        return f'<td class="{classes}" data-v=""></td>'
    if isinstance(value, bool):
        shown = sort = str(value).lower()
    elif isinstance(value, float):
        shown, sort = f"{value:.3f}", repr(value)
    else:
        shown = sort = str(value)
    bounds = ""
    if interval is not None and not _missing(interval[0]) and not _missing(interval[1]):
        bounds = f' <span class="ci">[{float(interval[0]):.3f}, {float(interval[1]):.3f}]</span>'
    return f'<td class="{classes}" data-v="{html.escape(sort)}">{html.escape(shown)}{bounds}</td>'


def _is_number(series: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)


def _ordered(board: Leaderboard) -> pd.DataFrame:
    """The rows, best headline first (missing values last)."""
    frame = board.frame.reset_index(drop=True)
    if board.headline is None:
        return frame
    return frame.sort_values(board.headline, ascending=False, na_position="last", kind="stable")


def leaderboard_html(board: Leaderboard, table_id: str) -> str:
    """One leaderboard: caption, headline sentence, filter box, column toggle and the table."""
    frame = _ordered(board)
    best = _best_mask(board, frame)
    kind = [board.kind_column] if board.kind_column in frame.columns else []
    headline = [board.headline] if board.headline else []
    others = [c for c in board.others if c in frame.columns and c not in (*board.keys, *kind, *headline)]
    columns = [*board.keys, *kind, *headline, *others]
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"results page table {board.title!r}: columns {missing} are not in the table")
    head = []
    for column in columns:
        role = "more" if column in others else ("headline" if column in headline else "key")
        order = ' data-order="desc"' if column in headline else ""
        kind_of = "num" if _is_number(frame[column]) else "text"
        head.append(f'<th class="{role}" data-type="{kind_of}"{order}>{html.escape(column)}</th>')
    body = []
    bounded = {c for c in columns if f"{c}_low" in frame.columns and f"{c}_high" in frame.columns}
    for (_, row), is_best in zip(frame.iterrows(), best, strict=True):
        row_kind = str(row[board.kind_column]) if kind else ""
        cells = []
        for column in columns:
            role = "more" if column in others else ("headline" if column in headline else "key")
            interval = (row[f"{column}_low"], row[f"{column}_high"]) if column in bounded else None
            cells.append(_cell(row[column], role, interval))
        if is_best:
            badge = html.escape(board.best_label)
            cells[0] = cells[0].replace("</td>", f' <span class="badge best">{badge}</span></td>')
        classes = f"kind-{html.escape(row_kind)}" + (" best" if is_best else "")
        body.append(f'<tr class="{classes}">{"".join(cells)}</tr>')
    ranked = (
        f"Ranked by <b>{html.escape(board.headline)}</b>: {html.escape(board.headline_says)}" if board.headline else ""
    )
    note = f"<p class='note'>{html.escape(board.note)}</p>" if board.note else ""
    toggle = (
        f'<label><input type="checkbox" class="toggle-more" data-table="{table_id}"> all columns '
        f"({len(others)} more)</label>"
        if others
        else ""
    )
    return (
        f"<h3>{html.escape(board.title)}</h3><p class='ranked'>{ranked}</p>{note}"
        f'<div class="controls"><input type="search" class="filter" data-table="{table_id}" '
        f'placeholder="filter rows"> {toggle} <span class="count">{len(frame)} rows</span></div>'
        f'<div class="scroll"><table class="board" id="{table_id}"><thead><tr>{"".join(head)}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def figure_html(figure: Any, div_id: str) -> str:
    """A Plotly figure as a ``<div>`` (its JavaScript is the page's, inlined once)."""
    return str(figure.to_html(full_html=False, include_plotlyjs=False, div_id=div_id, config={"responsive": True}))


_STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1400px;padding:0 1em;color:#222}
table.board{border-collapse:collapse;font-size:13px}
table.board th,table.board td{border-bottom:1px solid #ddd;padding:3px 8px;text-align:left;white-space:nowrap}
table.board th{cursor:pointer;background:#f4f4f4;position:sticky;top:0}
table.board th[data-order=asc]::after{content:" \\25B2"} table.board th[data-order=desc]::after{content:" \\25BC"}
table.board:not(.all-columns) .more{display:none}
td.headline,th.headline{font-weight:bold;background:#fffbe6}
tr.kind-baseline{color:#777;font-style:italic} tr.kind-published{background:#eef4fb}
tr.best td{background:#e7f7e7}
.badge{font-size:11px;border-radius:3px;padding:0 4px;color:#fff;background:#2a8a2a}
.ci{color:#666;font-size:11px;font-weight:normal}
.scroll{max-height:70vh;overflow:auto;border:1px solid #ccc}
.controls{margin:.4em 0} .count{color:#777;font-size:12px} .note,.ranked{font-size:14px}
"""

_SCRIPT = """
document.querySelectorAll('table.board').forEach(function (table) {
  var body = table.tBodies[0];
  table.querySelectorAll('th').forEach(function (th, index) {
    th.addEventListener('click', function () {
      var ascending = th.dataset.order !== 'asc';
      table.querySelectorAll('th').forEach(function (other) { delete other.dataset.order; });
      th.dataset.order = ascending ? 'asc' : 'desc';
      var numeric = th.dataset.type === 'num';
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[index].dataset.v, y = b.cells[index].dataset.v;
        if (x === '' || y === '') { return (x === '') - (y === ''); }
        var order = numeric ? parseFloat(x) - parseFloat(y) : x.localeCompare(y);
        return ascending ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
document.querySelectorAll('input.filter').forEach(function (box) {
  box.addEventListener('input', function () {
    var text = box.value.toLowerCase();
    Array.prototype.forEach.call(document.getElementById(box.dataset.table).tBodies[0].rows, function (row) {
      row.style.display = row.textContent.toLowerCase().indexOf(text) >= 0 ? '' : 'none';
    });
  });
});
document.querySelectorAll('input.toggle-more').forEach(function (box) {
  box.addEventListener('change', function () {
    document.getElementById(box.dataset.table).classList.toggle('all-columns', box.checked);
  });
});
"""


def results_page(title: str, intro: str, sections: Sequence[Section]) -> str:
    """The whole page as one HTML string (Plotly's JavaScript inlined, nothing fetched)."""
    from plotly.offline import get_plotlyjs

    parts = []
    for s, section in enumerate(sections):
        parts.append(f"<h2>{html.escape(section.title)}</h2>")
        if section.text:
            parts.append(f"<p>{html.escape(section.text)}</p>")
        parts += [leaderboard_html(board, f"table-{s}-{t}") for t, board in enumerate(section.tables)]
        parts += [figure_html(figure, f"plot-{s}-{f}") for f, figure in enumerate(section.figures)]
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{_STYLE}</style><script>{get_plotlyjs()}</script></head>"
        f"<body><h1>{html.escape(title)}</h1><p>{html.escape(intro)}</p>{''.join(parts)}"
        f"<script>{_SCRIPT}</script></body></html>"
    )


def write_page(path: Path, text: str) -> Path:
    """Write the page atomically (a reader never sees half a file); returns ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)
    return path
