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
    #: Metrics a row of tabs above the table re-ranks it by, one click each (the headline first).
    rank_tabs: Sequence[str] = ()
    #: Metrics where lower is better (ranked ascending by their tab).
    lower_is_better: Sequence[str] = ()
    #: A column whose values become tabs showing one group of rows at a time (e.g. a study's subsets).
    split_by: str | None = None
    #: The group shown first (default: the first value in the table).
    split_first: str | None = None


@dataclass(frozen=True)
class Section:
    """A heading, a paragraph, then tables and Plotly figures."""

    title: str
    text: str = ""
    tables: Sequence[Leaderboard] = ()
    figures: Sequence[Any] = field(default_factory=tuple)
    #: The heading's ``id``, so that a link (an asset's metadata) opens the page at this section.
    anchor: str = ""
    #: HTML written by the page's own code (findings as lists, embedded PNG plots), after the text.
    html_blocks: Sequence[str] = ()


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
    groups = frame[board.split_by] if board.split_by else pd.Series(0, index=frame.index)
    top = values.where(eligible).groupby(groups).transform("max")
    return eligible & (values == top)


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


def _columns(board: Leaderboard, frame: pd.DataFrame) -> tuple[list[str], list[str], list[str]]:
    """(every column shown, the headline's, the ones hidden until "all columns")."""
    kind = [board.kind_column] if board.kind_column in frame.columns and board.kind_column not in board.keys else []
    headline = [board.headline] if board.headline else []
    hidden = [c for c in board.others if c in frame.columns and c not in (*board.keys, *kind, *headline)]
    tabbed = [c for c in board.rank_tabs if c in frame.columns and c not in (*board.keys, *headline, *hidden)]
    columns = [*board.keys, *kind, *headline, *hidden, *tabbed]
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"results page table {board.title!r}: columns {missing} are not in the table")
    return columns, headline, [*hidden, *tabbed]


def _role(column: str, headline: list[str], hidden: list[str]) -> str:
    return "more" if column in hidden else ("headline" if column in headline else "key")


def _header(frame: pd.DataFrame, columns: list[str], headline: list[str], hidden: list[str]) -> str:
    head = []
    for column in columns:
        order = ' data-order="desc"' if column in headline else ""
        kind_of = "num" if _is_number(frame[column]) else "text"
        name = html.escape(column)
        role = _role(column, headline, hidden)
        head.append(f'<th class="{role}" data-col="{name}" data-type="{kind_of}"{order}>{name}</th>')
    return "".join(head)


def _rows(board: Leaderboard, frame: pd.DataFrame, columns: list[str], headline: list[str], hidden: list[str]) -> str:
    best = _best_mask(board, frame)
    bounded = {c for c in columns if f"{c}_low" in frame.columns and f"{c}_high" in frame.columns}
    body = []
    for (_, row), is_best in zip(frame.iterrows(), best, strict=True):
        cells = []
        for column in columns:
            interval = (row[f"{column}_low"], row[f"{column}_high"]) if column in bounded else None
            cells.append(_cell(row[column], _role(column, headline, hidden), interval))
        if is_best:
            badge = html.escape(board.best_label)
            cells[0] = cells[0].replace("</td>", f' <span class="badge best">{badge}</span></td>')
        row_kind = str(row[board.kind_column]) if board.kind_column in frame.columns else ""
        classes = f"kind-{html.escape(row_kind)}" + (" best" if is_best else "")
        split = f' data-split="{html.escape(str(row[board.split_by]))}"' if board.split_by else ""
        body.append(f'<tr class="{classes}"{split}>{"".join(cells)}</tr>')
    return "".join(body)


def _tab_buttons(label: str, kind: str, values: Sequence[tuple[str, str]], table_id: str, active: str) -> str:
    """A row of one-click buttons (``values``: (value, sort order or "")) above a table."""
    buttons = "".join(
        f'<button type="button" class="tab{" active" if value == active else ""}" data-value="{html.escape(value)}"'
        f' data-order="{order}">{html.escape(value)}</button>'
        for value, order in values
    )
    return f'<div class="tabs {kind}" data-table="{table_id}"><span class="tabs-label">{label}</span> {buttons}</div>'


def _tabs(board: Leaderboard, frame: pd.DataFrame, table_id: str) -> str:
    """The metric tabs (re-rank) and the group tabs (one subset at a time) of a table."""
    parts = []
    metrics = [m for m in dict.fromkeys([*([board.headline] if board.headline else []), *board.rank_tabs])]
    if len(metrics) > 1:
        orders = [(m, "asc" if m in board.lower_is_better else "desc") for m in metrics if m in frame.columns]
        parts.append(_tab_buttons("Rank by:", "rank-tabs", orders, table_id, metrics[0]))
    if board.split_by:
        values = [str(v) for v in dict.fromkeys(board.frame[board.split_by].dropna())]  # the table's order
        first = board.split_first if board.split_first in values else (values[0] if values else "")
        parts.append(_tab_buttons(f"{board.split_by}:", "split-tabs", [(v, "") for v in values], table_id, first))
    return "".join(parts)


def leaderboard_html(board: Leaderboard, table_id: str) -> str:
    """One leaderboard: caption, headline sentence, metric and group tabs, filter box, column toggle, table."""
    frame = _ordered(board)
    columns, headline, hidden = _columns(board, frame)
    ranked = (
        f"Ranked by <b class='ranked-name' data-table='{table_id}'>{html.escape(board.headline)}</b>"
        f"<span class='ranked-says' data-table='{table_id}'>: {html.escape(board.headline_says)}</span>"
        if board.headline
        else ""
    )
    note = f"<p class='note'>{html.escape(board.note)}</p>" if board.note else ""
    toggle = (
        f'<label><input type="checkbox" class="toggle-more" data-table="{table_id}"> all columns '
        f"({len(hidden)} more)</label>"
        if hidden
        else ""
    )
    return (
        f"<h3>{html.escape(board.title)}</h3><p class='ranked'>{ranked}</p>{note}{_tabs(board, frame, table_id)}"
        f'<div class="controls"><input type="search" class="filter" data-table="{table_id}" '
        f'placeholder="filter rows"> {toggle} <span class="count">{len(frame)} rows</span></div>'
        f'<div class="scroll"><table class="board" id="{table_id}"><thead><tr>'
        f"{_header(frame, columns, headline, hidden)}</tr></thead>"
        f"<tbody>{_rows(board, frame, columns, headline, hidden)}</tbody></table></div>"
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
table.board:not(.all-columns) .more.ranked{display:table-cell}
td.ranked,th.ranked{font-weight:bold;background:#fffbe6}
.tabs{margin:.3em 0;font-size:13px} .tabs-label{color:#555}
.tab{border:1px solid #bbb;background:#f8f8f8;border-radius:3px;padding:1px 7px;margin:1px;cursor:pointer}
.tab.active{background:#2a6ebb;color:#fff;border-color:#2a6ebb}
img.plot{max-width:100%;border:1px solid #eee;margin:.5em 0}
"""

_SCRIPT = """
function columnIndex(table, name) {
  var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
  return heads.findIndex(function (th) { return th.dataset.col === name; });
}
function sortTable(table, index, ascending) {
  var body = table.tBodies[0], th = table.tHead.rows[0].cells[index];
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
}
function refresh(table) {
  var box = document.querySelector('input.filter[data-table=' + table.id + ']');
  var text = box ? box.value.toLowerCase() : '', split = table.dataset.split;
  Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
    var shown = row.textContent.toLowerCase().indexOf(text) >= 0 && (!split || row.dataset.split === split);
    row.style.display = shown ? '' : 'none';
  });
}
document.querySelectorAll('table.board').forEach(function (table) {
  table.querySelectorAll('th').forEach(function (th, index) {
    th.addEventListener('click', function () { sortTable(table, index, th.dataset.order !== 'asc'); });
  });
});
document.querySelectorAll('input.filter').forEach(function (box) {
  box.addEventListener('input', function () { refresh(document.getElementById(box.dataset.table)); });
});
document.querySelectorAll('input.toggle-more').forEach(function (box) {
  box.addEventListener('change', function () {
    document.getElementById(box.dataset.table).classList.toggle('all-columns', box.checked);
  });
});
document.querySelectorAll('.tabs').forEach(function (tabs) {
  var table = document.getElementById(tabs.dataset.table);
  var choose = function (button) {
    tabs.querySelectorAll('.tab').forEach(function (b) { b.classList.toggle('active', b === button); });
    if (tabs.classList.contains('split-tabs')) { table.dataset.split = button.dataset.value; refresh(table); return; }
    var index = columnIndex(table, button.dataset.value);
    table.querySelectorAll('.ranked').forEach(function (cell) { cell.classList.remove('ranked'); });
    Array.prototype.forEach.call(table.rows, function (row) { row.cells[index].classList.add('ranked'); });
    sortTable(table, index, button.dataset.order === 'asc');
    var name = document.querySelector('.ranked-name[data-table=' + table.id + ']');
    var says = document.querySelector('.ranked-says[data-table=' + table.id + ']');
    if (name) { name.textContent = button.dataset.value; }
    if (says) { says.style.display = button === tabs.querySelector('.tab') ? '' : 'none'; }
  };
  tabs.querySelectorAll('.tab').forEach(function (button) {
    button.addEventListener('click', function () { choose(button); });
  });
  var active = tabs.querySelector('.tab.active');
  if (active && tabs.classList.contains('split-tabs')) { choose(active); }
});
"""


def results_page(title: str, intro: str, sections: Sequence[Section]) -> str:
    """The whole page as one HTML string (Plotly's JavaScript inlined, nothing fetched)."""
    from plotly.offline import get_plotlyjs

    parts = []
    for s, section in enumerate(sections):
        anchor = f' id="{html.escape(section.anchor)}"' if section.anchor else ""
        parts.append(f"<h2{anchor}>{html.escape(section.title)}</h2>")
        if section.text:
            parts.append(f"<p>{html.escape(section.text)}</p>")
        parts += list(section.html_blocks)
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
