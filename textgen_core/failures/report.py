"""Failure modes as plain text: the lines the command line prints (and the report can reuse)."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from .modes import FailureModes


def _share(value: Any, low: Any, high: Any, note: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if low is None or (isinstance(low, float) and math.isnan(low)):
        return f"{value:.1%} ({note})" if note else f"{value:.1%}"
    return f"{value:.1%} [{low:.1%}, {high:.1%}]"


def _p(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return "<1e-6" if value < 1e-6 else f"{value:.2g}"


def method_line(modes: FailureModes) -> str:
    p = modes.params
    sampled = (f"; {p['embedded']} distinct texts embedded and clustered, {p['handed_off']} more joined a mode by "
               "their words" if p.get("handed_off") else "")
    unsorted = modes.modes.loc[modes.modes["mode"] < 0, "size"].sum()
    return (f"run {modes.run_id}: {p['failing']} failing judgement(s) in {', '.join(p['units'])}, "
            f"{int((modes.modes['mode'] >= 0).sum())} mode(s), {int(unsorted)} unsorted; {p['method']} "
            f"(seed {p['seed']}, {p['model']} embeddings, HDBSCAN min size {p['min_size']}{sampled})"
            + (f"; names by the judge {p['judge_names']['model']}" if p.get("judge_names") else ""))


def mode_lines(modes: FailureModes, *, by: pd.DataFrame | None = None, examples: int = 3) -> list[str]:
    """Each mode: its name and size, each model's rate with its interval, its words and example cells."""
    rates = modes.rates(by=by)
    lines = [method_line(modes)]
    for mode, name, size, words in zip(modes.modes["mode"], modes.modes["name"], modes.modes["size"],
                                       modes.modes["words"]):
        title, note = modes.title(int(mode)), modes.naming_note(int(mode))
        lines.append(f"\nmode {mode}: {title}  ({size} judgements{'' if title == name else f'; words: {name}'})")
        if note:
            lines.append(f"  no judge's name: {note}")
        if len(words):
            lines.append("  words: " + ", ".join(words))
        part = rates[rates["mode"] == mode]
        for row in part.itertuples():
            where = f"{row.slice} / " if by is not None else ""
            lines.append(f"  {where}{row.model}: {_share(row.rate, row.low, row.high, row.note)} of "
                         f"{row.cells} scored cells ({row.failing} failing)")
        for ex in modes.examples(int(mode), examples).itertuples():
            text = ex.text if len(ex.text) <= 110 else ex.text[:107] + "..."
            lines.append(f"  e.g. {ex.datum_id} / {ex.model} / {ex.unit}: {text}")
    lines.append("\nRates: share of each model's scored cells with a failing judgement in the mode, 95% interval "
                 "by the small-sample rule of docs/statistics.md (exact below 30 cells, Wilson from 30). Unscored "
                 "cells are neither failures nor cells.")
    return lines


def comparison_lines(table: pd.DataFrame, baseline: str, alpha: float = 0.05) -> list[str]:
    """The paired comparison of each candidate with the baseline, mode by mode, with the Holm family."""
    lines = [f"\ncompared with {baseline} on paired cells (Holm family of {table.attrs.get('family', 0)} tests, "
             f"flagged when Holm p < {alpha:g}):"]
    for candidate, part in table.groupby("candidate", sort=False):
        lines.append(f"  {candidate}:")
        for row in part.itertuples():
            diff = "-" if math.isnan(row.difference) else f"{row.difference:+.1%}"
            interval = f" [{row.low:+.1%}, {row.high:+.1%}]" if row.low is not None and not (
                isinstance(row.low, float) and math.isnan(row.low)) else ""
            tags = [t for t in ("FLAGGED" if row.flagged else "", row.change, row.note or "") if t]
            lines.append(f"    mode {row.mode} {row.name}: {row.baseline_rate:.1%} -> {row.candidate_rate:.1%}, "
                         f"{diff}{interval}, n={row.n}, p={_p(row.p)}, Holm p={_p(row.p_holm)}"
                         + (f"  ({'; '.join(tags)})" if tags else ""))
    return lines
