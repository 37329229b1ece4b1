"""A leaderboard plot with one button per metric and the baselines drawn as reference lines.

Plotly's buttons (``updatemenus``) switch which traces are visible and the layout (order of the
bars, the reference lines, the title), so the page needs no code of its own to re-plot. One trace
per (metric, kind): the colours stay those of the kinds in every view.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd


def _bounds(rows: pd.DataFrame, metric: str) -> dict[str, Any]:
    """Plotly ``error_x`` from ``<metric>_low/_high`` (none where the table has no bounds)."""
    if f"{metric}_low" not in rows.columns or f"{metric}_high" not in rows.columns:
        return {}
    value = rows[metric].astype(float)
    return {
        "error_x": {
            "type": "data",
            "symmetric": False,
            "array": (rows[f"{metric}_high"].astype(float) - value).clip(lower=0).tolist(),
            "arrayminus": (value - rows[f"{metric}_low"].astype(float)).clip(lower=0).tolist(),
        }
    }


def _reference_lines(frame: pd.DataFrame, label: str, metric: str, references: Sequence[str]) -> tuple[list, list]:
    """Dashed vertical lines (and their names) at the reference rows' values of ``metric``."""
    shapes: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    for position, name in enumerate(references):
        values = pd.to_numeric(frame.loc[frame[label] == name, metric], errors="coerce").dropna()
        if values.empty:
            continue
        x = float(values.iloc[0])
        shapes.append(
            {"type": "line", "xref": "x", "yref": "paper", "x0": x, "x1": x, "y0": 0, "y1": 1}
            | {"line": {"dash": "dash", "color": "#444", "width": 1.5}}
        )
        notes.append(
            {"x": x, "y": 1.0 - 0.03 * position, "xref": "x", "yref": "paper", "showarrow": False}
            | {"text": f"{name} {x:.3f}", "xanchor": "left", "font": {"size": 11, "color": "#444"}}
        )
    return shapes, notes


def metric_bar_figure(
    frame: pd.DataFrame,
    label: str,
    metrics: Sequence[str],
    references: Sequence[str],
    colours: Mapping[str, str],
    title: str,
    lower_is_better: Sequence[str] = (),
    kind_column: str = "kind",
) -> Any:
    """Horizontal bars of ``metrics[0]`` per row of ``frame`` (named by ``label``, coloured by kind,
    with its interval), a button per metric to show another, and the ``references`` rows (the
    baselines) as dashed lines in every view."""
    import plotly.graph_objects as go

    metrics = [m for m in metrics if m in frame.columns]
    if not metrics:
        raise ValueError(f"metric_bar_figure {title!r}: none of the metrics is a column of the table")
    figure = go.Figure()
    views: list[tuple[str, list[str], tuple[list, list]]] = []
    for metric in metrics:
        rows = frame[pd.to_numeric(frame[metric], errors="coerce").notna()]
        # best last: a category axis draws its first category at the bottom
        rows = rows.sort_values(metric, ascending=metric not in lower_is_better, kind="stable")
        for kind, part in rows.groupby(kind_column, sort=False):
            figure.add_trace(
                go.Bar(
                    x=part[metric].astype(float).tolist(),
                    y=part[label].astype(str).tolist(),
                    orientation="h",
                    name=str(kind),
                    legendgroup=str(kind),
                    marker_color=colours.get(str(kind), "#999999"),
                    meta=metric,
                    visible=metric == metrics[0],
                    **_bounds(part, metric),
                )
            )
        views.append((metric, rows[label].astype(str).tolist(), _reference_lines(frame, label, metric, references)))
    return _with_buttons(figure, views, title, len(frame))


def _with_buttons(figure: Any, views: list[tuple[str, list[str], tuple[list, list]]], title: str, n_rows: int) -> Any:
    """One button per metric: its traces visible, its order of bars, its reference lines."""
    buttons = []
    for metric, order, (shapes, notes) in views:
        layout = {
            "title.text": f"{title}: {metric}",
            "yaxis.categoryarray": order,
            "shapes": shapes,
            "annotations": notes,
        }
        visible = [trace.meta == metric for trace in figure.data]
        buttons.append({"label": metric, "method": "update", "args": [{"visible": visible}, layout]})
    first_metric, first_order, (shapes, notes) = views[0]
    figure.update_layout(
        title={"text": f"{title}: {first_metric}"},
        height=200 + 18 * n_rows,
        barmode="overlay",
        shapes=shapes,
        annotations=notes,
        margin={"t": 130},
        legend={"orientation": "h", "y": 1.0, "yanchor": "bottom", "x": 0.5},
        updatemenus=[
            {"type": "buttons", "direction": "right", "buttons": buttons, "x": 0, "y": 1.12}
            | {"xanchor": "left", "yanchor": "bottom", "showactive": True}
        ],
    )
    figure.update_yaxes(categoryorder="array", categoryarray=first_order, title=None)
    return figure
