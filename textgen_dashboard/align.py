"""Label page, agreement tab: "Improve this judge" -- candidates judged on held-out labels, accepted by a click.

The work is :mod:`textgen_core.align`'s: this section reads the split and the estimate, asks for the judge,
runs the alignment without accepting anything, shows every candidate's figures, the rewrite's prompt and the
Alternative Annotator Test, and saves a candidate that passed only when its *Accept* button is clicked.
"""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from textgen_core.align import accept, align, plan_calls, prepare
from textgen_core.errors import TextgenError
from textgen_core.judge.metrics.criteria import criterion

from . import data
from .judge_scale import judge_form
from .safe_text import plain
from .state import ALIGN_ACCEPT, ALIGN_HOLDOUT, ALIGN_MINE, ALIGN_RESULT, ALIGN_RUN, ALIGN_SAVED, ALIGN_SEED
from .widgets import show_table


def improve_section(run_id: int, score: str) -> None:
    """The section under the agreement figures of one run and score."""
    st.subheader("Improve this judge")
    st.caption("Candidate edits of the criterion are made from a training part of the labelled cells and judged "
               "on the held-out part only, against the current version, with a paired test. Nothing is saved "
               "until you accept a candidate that passed.")
    left, right = st.columns(2)
    holdout = left.number_input("Held-out share of the labelled cells", min_value=0.05, max_value=0.8, value=0.3,
                                step=0.05, key=ALIGN_HOLDOUT)
    seed = right.number_input("Seed of the split", min_value=0, value=0, step=1, key=ALIGN_SEED)
    store = data.store()
    try:
        setup = prepare(store, run_id, score, holdout=float(holdout), seed=int(seed))
    except TextgenError as exc:
        st.info(plain(str(exc)))
        return
    st.write(f"{len(setup.cells)} labelled cells: {len(setup.train)} to learn from, {len(setup.held_out)} held out "
             f"(stratified by the people's value, seed {setup.seed}; the split is stored and reused).")
    if setup.copied_from:
        st.info(f"{plain(setup.copied_from)} is a built-in metric: its words are copied into the editable criterion "
                f"{plain(setup.base.name)}, and the candidates edit the copy.")
    for note in setup.notes:
        st.caption(plain(note))
    judge, problem = judge_form("align", (data.run(run_id).get("judge") or {}))
    if problem:
        st.info(plain(problem))
        return
    mine = st.text_area("Your own edit of the criterion (optional; TOML, the same name, inputs and output)",
                        key=ALIGN_MINE)
    pasted = []
    if mine.strip():
        try:
            import tomllib

            pasted = [(criterion(tomllib.loads(mine), "your edit"), "your edit")]
        except (TextgenError, ValueError) as exc:
            st.warning(plain(f"your edit is not used: {exc}"))
    try:
        planned = plan_calls(setup, judge, store)
    except TextgenError as exc:
        st.warning(plain(str(exc)))
        return
    st.caption(f"Judge calls: {plain(planned.text())}.")
    key = (run_id, score, setup.seed, setup.holdout)
    if st.button("Propose and judge candidates", key=ALIGN_RUN):
        with st.spinner("Asking the judge..."):
            try:
                result = align(store, run_id, score, judge, holdout=setup.holdout, seed=setup.seed, pasted=pasted,
                               accept_best=False)
                st.session_state[ALIGN_RESULT] = (key, result)
                st.session_state.pop(ALIGN_SAVED, None)
            except TextgenError as exc:
                st.error(plain(str(exc)))
    found = st.session_state.get(ALIGN_RESULT)
    if found is not None and found[0] == key:
        _show(found[1])


def _show(result) -> None:  # noqa: ANN001 - an Alignment
    for why in result.dropped:
        st.caption(plain(f"No candidate: {why}"))
    if result.current is None:
        return
    show_table(_table(result), hide_index=True)
    missing = dict.fromkeys(a.interval.why for a in [result.current, *(j.agreement for j in result.judged)]
                            if not a.interval.given)
    for why in missing:
        st.caption(plain(f"* no interval: {why}"))
    st.caption(f"{result.current.n} held-out cells; 95% bootstrap intervals; difference: the candidate's statistic "
               f"minus the current version's on the same cells (paired bootstrap). Judge calls made: {result.calls}.")
    for j in result.judged:
        if j.candidate.prompt and j.candidate.kind == "rewrite":
            with st.expander("The rewrite: the reflective call's prompt and the criterion it proposed"):
                st.code(j.candidate.prompt, language=None)
                st.write(plain(j.candidate.criterion.criteria))
    for what, test in result.certification:
        st.write(plain(f"Alternative Annotator Test ({what}, epsilon {test.epsilon:g}): {test.verdict()}"))
        if test.results:
            show_table(pd.DataFrame([{"annotator": r.annotator, "cells": r.cells, "ρ judge": round(r.rho_judge, 3),
                                        "ρ annotator": round(r.rho_annotator, 3), "p": round(r.p, 4),
                                        "adjusted (BY)": round(r.p_adjusted, 4), "rejected": r.rejected}
                                       for r in test.results]), hide_index=True)
    saved = st.session_state.get(ALIGN_SAVED)
    if saved:
        st.success(plain(saved))
        return
    for index, j in enumerate(result.judged):
        if j.accepted and st.button(f"Accept {j.candidate.kind}: save it as the next version of "
                                    f"{result.setup.base.name}", key=f"{ALIGN_ACCEPT}.{index}", type="primary"):
            version = accept(data.store(), result, index)
            data.refresh()
            st.session_state[ALIGN_SAVED] = (f"Saved {result.setup.base.name} version {version} ({j.candidate.kind}); "
                                             "pick it in Evaluate to score a run with it.")
            st.rerun()
    if not any(j.accepted for j in result.judged):
        st.caption("No candidate passed: the current version stays.")


def _table(result) -> pd.DataFrame:  # noqa: ANN001 - an Alignment
    def value(a) -> str:  # noqa: ANN001 - an Agreement
        return "undefined" if math.isnan(a.value) else f"{a.value:.3f}"

    def interval(a) -> str:  # noqa: ANN001 - an Agreement; why there is none is said under the table
        return a.interval.text(3) if a.interval.given else "none *"

    best = result.best
    rows = [{"version": "current", result.current.statistic: value(result.current),
             "95% interval": interval(result.current), "difference [95%]": "", "p (no better)": "",
             "changed": "", "unscored": "", "verdict": ""}]
    for i, j in enumerate(result.judged):
        t = j.test
        rows.append({"version": j.candidate.kind + (" (best)" if i == best else ""),
                     result.current.statistic: value(j.agreement), "95% interval": interval(j.agreement),
                     "difference [95%]": "–" if math.isnan(t.delta) else f"{t.delta:+.3f} {t.interval.text(3)}",
                     "p (no better)": "–" if math.isnan(t.p_not_better) else f"{t.p_not_better:.4f}",
                     "changed": t.changed, "unscored": len(j.unscored),
                     "verdict": ("passed: " if j.accepted else "not accepted: ") + j.why})
    return pd.DataFrame(rows).astype(str)
