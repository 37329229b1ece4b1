"""Presentation shared by both studies: Markdown tables, embedded PNG images, plot setup."""

from __future__ import annotations

import base64
import io
from typing import Any

import pandas as pd


def markdown_table(frame: pd.DataFrame, max_rows: int = 200, digits: int = 3) -> str:
    """A Markdown table of ``frame``: the first ``max_rows`` rows, with a note when cut.

    Floats are rounded to ``digits`` for display only; missing values are left blank, and a ``|``
    inside a text cell is shown as ``/`` so that it cannot break the table.
    """
    if frame.empty:
        return "_(no rows)_"
    shown = frame.head(max_rows).copy()
    for column in shown.columns:
        values = shown[column]
        if values.dtype == object or pd.api.types.is_string_dtype(values):
            values = values.map(lambda v: v.replace("|", "/") if isinstance(v, str) else v)
        if values.isna().any():
            # tabulate writes NaN as "nan" and pd.NA as "<NA>"; as None a missing value is blank.
            values = values.astype(object).where(values.notna(), None)
        shown[column] = values
    text = shown.to_markdown(index=False, floatfmt=f".{digits}f", missingval="")
    if len(frame) > max_rows:
        text += f"\n\n_{len(frame) - max_rows} more rows not shown; the full table is in DuckDB._"
    return text


def with_interval_text(frame: pd.DataFrame, metrics: list[str] | tuple[str, ...], digits: int = 3) -> pd.DataFrame:
    """``frame`` for display: each metric with ``<metric>_low/_high`` shown as ``0.215 [0.194, 0.238]``
    (the bound columns dropped); a metric without bounds on a row keeps its plain value."""
    shown = frame.copy()
    for metric in metrics:
        low, high = f"{metric}_low", f"{metric}_high"
        if metric not in shown.columns or low not in shown.columns:
            continue
        texts: list[str | None] = []
        for value, lo, hi in zip(shown[metric], shown[low], shown[high], strict=True):
            if value is None or pd.isna(value):
                texts.append(None)
            elif lo is None or hi is None or pd.isna(lo) or pd.isna(hi):
                texts.append(f"{float(value):.{digits}f}")
            else:
                texts.append(f"{float(value):.{digits}f} [{float(lo):.{digits}f}, {float(hi):.{digits}f}]")
        shown[metric] = pd.Series(texts, index=shown.index, dtype="object")
        shown = shown.drop(columns=[low, high])
    return shown


def png_markdown(png: bytes, title: str) -> str:
    """Markdown that shows a PNG inline (base64 data URI)."""
    return f"![{title}](data:image/png;base64,{base64.b64encode(png).decode('ascii')})"


def figure_png(fig: Any) -> bytes:
    """The figure as PNG bytes (the figure is closed)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return buffer.getvalue()


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the non-interactive Agg backend (assets run without a display)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt
