"""Compare, across runs: one model of one run (the baseline) against one model of another run (the candidate),
through :func:`textgen_core.compare.across_runs.compare_across`, the function `textgen-eval compare --baseline
RUN:MODEL --candidate RUN:MODEL` calls, with the same defaults, so the page and the CLI give the same numbers.

Scores made under different settings (metric parameters, prompt version, judge) are refused with the difference in
words, until "Allow different judges" is ticked; then the difference stands beside every affected row.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from textgen_core.compare.across_runs import DifferentSettings, Side
from textgen_core.errors import TextgenError

from . import compare_data, data
from .address import Field
from .pickers import keep_choice, relabel, run_label
from .safe_text import plain
from .widgets import show_table
from .words import interval_text, verdict_words

ACROSS, BASE_RUN, BASE_MODEL = "compare.across", "compare.across_base_run", "compare.across_base_model"
CAND_RUN, CAND_MODEL, ALLOW = "compare.across_cand_run", "compare.across_cand_model", "compare.across_allow"
#: The cross-run form in the address: ``?across=1&base_run=3&base_model=prod&cand_run=7&cand_model=prod&allow=1``.
FIELDS = (Field("across", ACROSS, "bool"), Field("base_run", BASE_RUN, "int"), Field("base_model", BASE_MODEL),
          Field("cand_run", CAND_RUN, "int"), Field("cand_model", CAND_MODEL), Field("allow", ALLOW, "bool"))
MODES = {False: "Models of one run", True: "Across runs (run:model against run:model)"}


def across_mode() -> bool:
    """The page's first choice: models of one run, or a model of one run against a model of another."""
    return bool(st.radio("Compare", list(MODES), key=ACROSS, format_func=MODES.get, horizontal=True))


def _side(title: str, runs: pd.DataFrame, run_key: str, model_key: str, default_run: int) -> Side | None:
    ids = [int(r) for r in runs["run_id"]]
    labels = {int(row["run_id"]): run_label(row) for row in runs.to_dict("records")}
    keep_choice(run_key, ids, default_run)
    relabel(run_key, labels)
    run_id = int(st.selectbox(f"{title} run", ids, key=run_key, format_func=labels.get))
    models = list(runs.loc[runs["run_id"] == run_id, "models"].iloc[0])
    if not models:
        st.info(f"Run {run_id} has no models with scores.")
        return None
    keep_choice(model_key, models)
    return Side(run_id, str(st.selectbox(f"{title} model", models, key=model_key)))


def across_section() -> None:
    """Two pickers (baseline run:model, candidate run:model) and the comparison of every score both have."""
    runs = data.runs()
    runs = runs[runs["status"] == "finished"]
    if runs.empty:
        st.info("No finished run yet: a comparison across runs needs two.")
        return
    newest = [int(r) for r in runs["run_id"]]  # newest first
    left, right = st.columns(2)
    with left:
        baseline = _side("Baseline", runs, BASE_RUN, BASE_MODEL, newest[min(1, len(newest) - 1)])
    with right:
        candidate = _side("Candidate", runs, CAND_RUN, CAND_MODEL, newest[0])
    allow = st.checkbox("Allow different judges", key=ALLOW,
                        help="Compare scores made under different settings (metric parameters, prompt version, "
                             "judge); the difference is shown beside every affected row")
    if baseline is None or candidate is None:
        return
    if baseline == candidate:
        st.info("The baseline and the candidate are the same model of the same run: pick two different ones.")
        return
    try:
        frame = compare_data.comparison_across(baseline.run_id, baseline.model, candidate.run_id, candidate.model,
                                               allow)
    except DifferentSettings as exc:
        lines = "\n".join(f"- {plain(score)}: {plain(text)}" for score, text in exc.differences.items())
        st.error(f"The two runs scored differently, so their numbers are not comparable:\n\n{lines}\n\n"
                 "Tick **Allow different judges** to compare anyway, with the difference beside every affected row.")
        return
    except TextgenError as exc:
        st.error(plain(str(exc)))
        return
    show_table(across_table(frame), hide_index=True, placeholder="–")
    notes = [f"{baseline.label} (run {baseline.run_id}) against {candidate.label} (run {candidate.run_id}); "
             f"{frame.attrs['resamples']} resamples, seed {frame.attrs['seed']}. Datums pair by id; the statistics "
             "are those of a comparison within one run (paired bootstrap interval, sign-flip permutation test, Holm "
             "over the scores with a direction)."]
    if frame.attrs["left_out"]:
        notes.append(f"{frame.attrs['left_out']} datum(s) left out: the same id with another query or references "
                     "in the two dataset versions.")
    if frame.attrs["allowed_differences"]:
        notes.append("Compared despite different settings: " + ", ".join(frame.attrs["allowed_differences"]) + ".")
    for note in notes:
        st.caption(plain(note))


def across_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The comparison as shown: a row per score, the numbers of ``compare_across``, the difference when allowed."""
    table = pd.DataFrame({
        "score": frame["score"], "n": frame["n"], "baseline mean": frame["baseline_mean"],
        "candidate mean": frame["candidate_mean"], "delta": frame["delta"],
        "95% CI": [interval_text(lo, hi) for lo, hi in zip(frame["ci_low"], frame["ci_high"])],
        "p (Holm)" if frame.attrs.get("holm") else "p": frame["p_adjusted" if frame.attrs.get("holm") else "p_value"],
        "verdict": [verdict_words(v, lo, hi) for v, lo, hi in zip(frame["verdict"], frame["ci_low"],
                                                                  frame["ci_high"])],
        "why": frame["why"], "W/T/L": [f"{w}/{t}/{l}" for w, t, l in zip(frame["wins"], frame["ties"],
                                                                         frame["losses"])],
        "left out": frame["left_out"]})
    if (frame["difference"] != "").any():
        table["difference"] = frame["difference"]
    return table.reset_index(drop=True)
