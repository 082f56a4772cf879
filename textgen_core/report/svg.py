"""Charts a report draws itself as inline SVG: a mean with its interval per model, a delta with its interval.

Inline SVG rather than an inlined chart library: a few kilobytes per chart
instead of 3.5 MB of plotly.js in every file, no script needed to see a chart,
sharp when printed, and nothing that could fetch anything. Every label goes
through :func:`.markup.tag`, so a model's name is text, never markup.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from .markup import Markup, tag

WIDTH = 640
LABEL = 190
RIGHT = 20
ROW = 22
TOP = 10
AXIS = 30
#: Rows a chart draws at most (the table beside it has them all).
ROWS_SHOWN = 20


def _ok(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _ticks(low: float, high: float, count: int = 5) -> list[float]:
    if high <= low:
        return [low]
    return [low + (high - low) * i / (count - 1) for i in range(count)]


def interval_chart(rows: Sequence[dict[str, Any]], *, label: str, value: str, low: str, high: str,
                   bounds: tuple[float | None, float | None] = (None, None), zero: bool = False,
                   title: str = "") -> Markup:
    """One row per item: a dot at ``value`` and a line from ``low`` to ``high``; items without a value are
    listed with 'no value'. ``bounds`` fixes the axis (a score's declared range); ``zero`` draws a line at 0."""
    rows = list(rows)[:ROWS_SHOWN]
    seen = [r[k] for r in rows for k in (value, low, high) if _ok(r.get(k))]
    lo = bounds[0] if bounds[0] is not None else (min(seen) if seen else 0.0)
    hi = bounds[1] if bounds[1] is not None else (max(seen) if seen else 1.0)
    if zero:
        lo, hi = min(lo, 0.0), max(hi, 0.0)
    if seen:
        lo, hi = min(lo, min(seen)), max(hi, max(seen))
    if hi - lo < 1e-12:
        lo, hi = lo - 0.5, hi + 0.5
    span = WIDTH - LABEL - RIGHT
    height = TOP + ROW * len(rows) + AXIS

    def x(v: float) -> str:
        return f"{LABEL + (v - lo) / (hi - lo) * span:.1f}"

    parts = [tag("title", title)] if title else []
    for tick in _ticks(lo, hi):
        parts.append(tag("line", x1=x(tick), x2=x(tick), y1=TOP, y2=height - AXIS + 4, stroke="#ddd"))
        parts.append(tag("text", f"{tick:.3g}", x=x(tick), y=height - AXIS + 18, text_anchor="middle",
                         font_size="11", fill="#555"))
    if zero:
        parts.append(tag("line", x1=x(0.0), x2=x(0.0), y1=TOP, y2=height - AXIS + 4, stroke="#888",
                         stroke_dasharray="4 3"))
    for i, r in enumerate(rows):
        y = TOP + ROW * i + ROW / 2
        name = str(r.get(label, ""))
        parts.append(tag("text", name if len(name) <= 28 else name[:27] + "…", x=LABEL - 8, y=f"{y + 4:.1f}",
                         text_anchor="end", font_size="12", fill="#222"))
        if _ok(r.get(low)) and _ok(r.get(high)):
            parts.append(tag("line", x1=x(r[low]), x2=x(r[high]), y1=f"{y:.1f}", y2=f"{y:.1f}",
                             stroke="#3b6ea5", stroke_width="2"))
        if _ok(r.get(value)):
            parts.append(tag("circle", cx=x(r[value]), cy=f"{y:.1f}", r="4", fill="#1d4e89"))
        else:
            parts.append(tag("text", "no value", x=LABEL + 4, y=f"{y + 4:.1f}", font_size="11", fill="#a33"))
    return tag("svg", *parts, viewBox=f"0 0 {WIDTH} {height}",
               width=str(WIDTH), height=str(height), role="img", cls="chart")
