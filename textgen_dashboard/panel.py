"""Judge panels and repeated judging in the dashboard: Evaluate's inputs; on Results each member's score beside
the panel's, the agreement and the split cells; on Explore every vote.

The numbers come from :mod:`textgen_core.compare.jury` through :mod:`.data`;
this module lays out widgets and tables. A run judged by one judge once shows nothing here.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any, Mapping, Sequence

import pandas as pd
import streamlit as st

from textgen_core.compare.jury import member_column
from textgen_core.errors import ParameterError
from textgen_core.formatting import plain_table
from textgen_core.runs.panel import Jury
from textgen_core.judge.settings import JURY_SETTINGS, JudgeSettings
from textgen_core.store.votes_sql import vote_tag

from . import compare_data, data
from .judge_scale import setting_input
from .state import RESULTS_OPEN, RESULTS_PANEL_SPLIT, jury_key
from .widgets import show_table

#: Split cells the Results table lists at most (the widest first).
SPLIT_ROWS = 200
AGREEMENT_CAPTION = (
    "alpha: Krippendorff's alpha among the panel's members over the run's cells (1 = they always agree, 0 = no "
    "better than chance, below 0 = worse), with a 95% bootstrap interval over cells; yes/no and label scores are "
    "nominal, scales of a few whole values ordinal, the rest interval. A member's value of a cell is the mean of its "
    "samples (the majority for yes/no and labels); an unscored vote is missing, never 0. paired: cells with values "
    "from two or more members (the units alpha counts). split: cells whose members are not unanimous (yes/no, "
    "labels) or further apart than the threshold (a quarter of the score's range).")


def jury_form(judge: JudgeSettings | None) -> tuple[Jury | None, str | None]:
    """Samples per request, more panel members on the judge's endpoint, and the cell's rule: one input per row
    of the jury settings table that Evaluate shows.

    Returns (the panel, None), (None, None) for one judge asked once, or (None, what is wrong).
    """
    shown = [s for s in JURY_SETTINGS if s.place == "jury"]
    values: dict[str, Any] = {}
    for s, column in zip(shown, st.columns([2 if s.kind == "names" else 1 for s in shown])):
        with column:
            values[s.name] = setting_input(s, jury_key(s.name), {})
    if judge is None:
        return None, None
    try:
        jury = Jury.of(judge, **values)
    except ParameterError as exc:
        return None, str(exc)
    if (warning := jury.repeats()) is not None:
        st.warning(warning[0].upper() + warning[1:])
    return (None if jury.plain else jury), None


def agreement_table(reports: Sequence[Any]) -> pd.DataFrame:
    """One row per score: level, members, alpha and its interval, cells paired and split, why alpha is undefined."""
    rows = [{"score": r.score, "level": r.level, "members": ", ".join(r.members),
             "alpha": None if math.isnan(r.alpha) else r.alpha, "ci_low": None if math.isnan(r.low) else r.low,
             "ci_high": None if math.isnan(r.high) else r.high, "paired": r.n_units, "cells": r.n_cells,
             "split": r.n_split, "split when": "not unanimous" if r.threshold == 0 else f"apart > {r.threshold:g}",
             "note": r.reason} for r in reports]
    return pd.DataFrame(rows, columns=["score", "level", "members", "alpha", "ci_low", "ci_high", "paired", "cells",
                                       "split", "split when", "note"])


def members_table(reports: Sequence[Any], summary: pd.DataFrame, models: Sequence[str]) -> pd.DataFrame:
    """Per score and model: the panel's mean (the run's cells) and each member's mean, side by side."""
    panel = summary.set_index(["model", "score"])["mean"] if not summary.empty else pd.Series(dtype=float)
    rows = []
    for r in reports:
        means = r.by_member.set_index(["model", "judge"])["mean"]
        for model in models:
            row = {"score": r.score, "model": model, "panel": panel.get((model, r.score))}
            row.update({member_column(m): means.get((model, m)) for m in r.members})
            rows.append(row)
    return pd.DataFrame(rows)


def split_table(reports: Sequence[Any], models: Sequence[str], limit: int = SPLIT_ROWS) -> pd.DataFrame:
    """The split cells of every score (of ``models``), the widest first within a score; member values as text."""
    parts = []
    for r in reports:
        split = r.split[r.split["model"].isin(list(models))].head(limit)
        values = {c: split[c].map(_value) for c in map(member_column, r.members)}
        parts.append(pd.DataFrame({"score": r.score, "datum_id": split["datum_id"], "model": split["model"],
                                   **values, "spread": split["spread"]}))
    found = [p for p in parts if not p.empty]
    return pd.concat(found, ignore_index=True).head(limit) if found else pd.DataFrame()


def _value(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def results_section(run_id: int, models: Sequence[str], summary: pd.DataFrame) -> None:
    """Results: unstable cells per model; for a panel its agreement, each member's mean beside the panel's, and
    the split cells."""
    reports, unstable = compare_data.panel(run_id)
    if not reports and unstable.empty:
        return
    st.subheader("Judge panel" if reports else "Repeated judging")
    number = st.column_config.NumberColumn
    unstable = unstable[unstable["model"].isin(list(models))]
    if not unstable.empty:
        show_table(unstable.assign(share=unstable["unstable"] / unstable["scored"]), hide_index=True,
                     column_config={"share": number("unstable share", format="percent")})
        st.caption("unstable: scored cells whose votes disagree (a spread above 0, or labels not unanimous), of "
                   "the scored cells; the cell's details keep its spread (Explore shows every vote).")
    if not reports:
        return
    show_table(agreement_table(reports), hide_index=True, placeholder="–", column_config={
        "alpha": number("alpha", format="%.3f"), "ci_low": number("95% CI low", format="%.3f"),
        "ci_high": number("95% CI high", format="%.3f"), "note": st.column_config.TextColumn("note", width="large")})
    st.caption(AGREEMENT_CAPTION)
    means = members_table(reports, summary, models)
    show_table(means, hide_index=True, placeholder="–",
                 column_config={c: number(c, format="%.4f") for c in means.columns if c not in ("score", "model")})
    st.caption("panel: the run's score (the mean or majority of the votes); each member: the mean of its own "
               "values over the cells it scored.")
    split = split_table(reports, models)
    if split.empty:
        st.caption("No split cells: the members never disagreed beyond the threshold.")
        return
    total = sum(int(r.split["model"].isin(list(models)).sum()) for r in reports)
    st.caption(f"{total} split cells; showing {len(split)}, the widest first. Select a row to read it in Explore.")
    show_table(plain_table(split), hide_index=True, key=RESULTS_PANEL_SPLIT, selection_mode="single-row",
                 on_select=partial(_pick, list(split["datum_id"])), placeholder="–",
                 column_config={"spread": number("spread", format="%.4g")})


def _pick(datum_ids: list[str]) -> None:
    selected = st.session_state[RESULTS_PANEL_SPLIT].selection.rows
    if selected and selected[0] < len(datum_ids):
        st.session_state[RESULTS_OPEN] = datum_ids[selected[0]]


def votes_table(votes: pd.DataFrame, verdicts: pd.DataFrame, metric: str) -> pd.DataFrame:
    """One datum's votes of one metric: model, score, member, sample, value (blank when unscored), label, the
    judge's reason (its one verdict's; with several verdicts, how many), and why a vote is unscored."""
    mine = votes[votes["metric"] == metric] if not votes.empty else votes
    if mine.empty:
        return pd.DataFrame()
    table = mine.sort_values(["model", "score", "judge", "sample"], kind="stable")
    mine_verdicts = verdicts[verdicts["metric"] == metric] if not verdicts.empty else verdicts

    def said(model: str, judge: str, sample: int) -> str:
        found = mine_verdicts[(mine_verdicts["model"] == model)
                              & mine_verdicts["step"].str.endswith(vote_tag(judge, int(sample)))]
        if len(found) == 1:
            return str(found["reason"].iloc[0] or "")
        return f"{len(found)} verdicts (below)" if len(found) else ""

    reasons = [said(m, j, s) for m, j, s in zip(table["model"], table["judge"], table["sample"])]
    columns = ["model", "score", "judge", "sample", "value", *(["label"] if "label" in table else [])]
    table = table[columns + ["reason"]].rename(columns={"judge": "member", "reason": "unscored reason"})
    table.insert(len(columns), "judge's reason", reasons)
    return table.assign(value=table["value"].map(lambda v: "" if pd.isna(v) else f"{v:.4g}")).reset_index(drop=True)


def votes_section(view: Mapping[str, pd.DataFrame], metric: str) -> None:
    """Explore: every member's and every sample's vote on this datum, with its reason."""
    table = votes_table(view.get("votes", pd.DataFrame()), view["verdicts"], metric)
    if table.empty:
        return
    members, samples = table["member"].nunique(), table["sample"].nunique()
    st.caption(f"Votes: {members} member{'s' if members > 1 else ''} x {samples} sample{'s' if samples > 1 else ''}; "
               "the score above is their mean (or majority). A vote's verdicts and judge exchanges below carry "
               "'| judge NAME, sample N' in their step.")
    show_table(plain_table(table), hide_index=True, placeholder="–")
