"""Compare page: is a candidate model really better than the baseline, score by score?

Every number comes from :mod:`textgen_core.compare` through :mod:`ui.data` (cached):
paired by datum id, a bootstrap interval of the mean delta, a permutation test and,
when several comparisons are made, Holm-adjusted p-values. This module lays out the
widgets, the table, the figures and the links to Explore; dataset text is shown in
dataframes only, never as HTML.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Mapping

import pandas as pd
import streamlit as st
from pandas.io.formats.style import Styler

from textgen_core.compare.comparison import needed
from textgen_core.compare.intervals import BOOTSTRAP_MAX
from textgen_core.compare.verdicts import APART, BETTER, INCONCLUSIVE, NO_DIFFERENCE, WORSE
from textgen_core.judge.metrics.pairwise_preference import NAME as PAIRWISE
from textgen_core.errors import TextgenError

from . import compare_data, data, score_warnings, state
from .address import Field, kept
from .compare_runs import FIELDS as ACROSS_FIELDS, across_mode, across_section
from .compare_charts import BACKGROUNDS, MAX_POINTS, forest_figure, largest_first, outcomes, scatter_figure
from .calibrated import compare_section
from .compare_agreement import agreement_section
from .failures import failure_modes_section
from .pairwise import pairwise_section
from .pickers import MANY_MODELS, keep_choice, keep_choices, many_models, open_requested, pick_run, runs_or_hint
from .safe_text import plain
from .slices import compare_section as slice_comparison, pick_slice
from .words import interval_text, verdict_words
from .report_button import report_button
from .widgets import show_table

TOP_DEFAULT = 10
#: Table order: regressions first, then what may hide one, then improvements.
VERDICT_RANK = {WORSE: 0, INCONCLUSIVE: 1, BETTER: 2, NO_DIFFERENCE: 3}
#: Random draws (datum pairs x resamples x 2) a comparison may take before it waits for a click (about 1.5 s).
AUTO_DRAWS = 100_000_000
#: Draws per second of compare_models on one core, for the wait shown before a large comparison.
DRAWS_PER_SECOND = 70_000_000
#: The 'better' column: which way each score improves.
ARROWS = {"higher": "↑ higher", "lower": "↓ lower"}


@dataclass(frozen=True)
class Choice:
    """What the user asked to compare, and how."""

    baseline: str
    candidates: list[str]
    scores: list[str]
    resamples: int
    seed: int
    tie_tolerance: float
    holm: bool


#: The page's state in its address: ``?run=3&baseline=a&candidates=b&scores=bleu&regressions=1``.
ADDRESS = (Field("run", state.COMPARE_RUN, "int"), Field("baseline", state.COMPARE_BASELINE),
           Field("candidates", state.COMPARE_CANDIDATES, "list"), Field("scores", state.COMPARE_SCORES, "list"),
           Field("regressions", state.COMPARE_REGRESSIONS, "bool"), Field("slice", state.COMPARE_SLICE), *ACROSS_FIELDS)


def render() -> None:
    """The whole Compare page, its state read from and written to the address."""
    st.title("Compare models")
    with kept(ADDRESS):
        _render()


def _render() -> None:
    runs = runs_or_hint()
    if runs is None:
        return
    if across_mode():
        across_section()
        return
    run_id = pick_run(runs, state.COMPARE_RUN, default_run(runs))
    open_requested(run_id, state.COMPARE_OPEN)
    run = data.run(run_id)
    scored = data.scored_counts(run_id)
    if run["status"] != "finished":
        st.info(f"Run status: {run['status']}. The comparison covers the cells stored so far.")
    present = set(scored["model"])
    models = [m for m in run["models"] if m in present]
    if len(models) < 2:
        st.info("A comparison needs scores for two models or more; this run has "
                f"{'none' if not models else 'one: ' + plain(models[0])}.")
        return
    pairwise_section(run_id)
    choice = choose(models, [name for name in dict.fromkeys(scored["score"]) if name != PAIRWISE],
                    (run, scored) if len(models) > MANY_MODELS else None)
    if choice is None or not confirmed(run_id, work(scored, choice), choice.resamples):
        return
    try:
        frame = compare_data.comparison(run_id, choice.baseline, choice.candidates, scores=choice.scores,
                                resamples=choice.resamples, seed=choice.seed, tie_tolerance=choice.tie_tolerance,
                                holm=choice.holm)
    except TextgenError as exc:
        st.error(plain(str(exc)))
        return
    frame = regressions_first(frame)
    table_section(frame)
    column = pick_slice(run, state.COMPARE_SLICE)
    if column:
        slice_comparison(run_id, column, choice)
    report_button(run_id, choice)
    compare_section(run_id, choice.baseline, choice.candidates, choice.scores)
    st.subheader("Deltas")
    st.plotly_chart(forest_figure(frame), key=state.COMPARE_FOREST)
    pairs_section(run_id, run, choice)
    agreement_section(run_id, run, choice.baseline, choice.candidates, choice.scores)
    failure_modes_section(run_id, models, choice.baseline, choice.candidates, page="compare")


def default_run(runs: pd.DataFrame) -> int | None:
    """The newest run with two models or more (runs are listed newest first)."""
    for run in runs.to_dict("records"):
        if len(run.get("models") or []) >= 2:
            return int(run["run_id"])
    return None


def work(scored: pd.DataFrame, choice: Choice) -> int:
    """Datum pairs resampled, summed over (candidate, score): at most the fewer of the two models' scored cells.

    Comparisons of BOOTSTRAP_MAX pairs or more take the t interval and the normal approximation: no resampling.
    """
    counts = scored.set_index(["model", "score"])["n_scored"]
    pairs = (int(min(counts.get((choice.baseline, s), 0), counts.get((c, s), 0)))
             for c in choice.candidates for s in choice.scores)
    return sum(n for n in pairs if n < BOOTSTRAP_MAX)


def confirmed(run_id: int, pairs: int, resamples: int) -> bool:
    """Large comparisons wait for a click, once per run and session; small ones start at once."""
    draws = pairs * resamples * 2  # bootstrap means and permutation sign flips
    if draws <= AUTO_DRAWS or st.session_state.get(state.COMPARE_CONFIRMED) == run_id:
        return True
    st.info(f"This comparison resamples {pairs:,} datum pairs {resamples:,} times for the intervals and as often "
            f"for the tests: roughly {max(1, round(draws / DRAWS_PER_SECOND))} s. The result is cached; "
            "later changes on this run start at once.", icon=":material/timer:")
    if not st.button("Compare", type="primary", key=state.COMPARE_GO):
        return False
    st.session_state[state.COMPARE_CONFIRMED] = run_id
    return True


def choose(models: list[str], scores: list[str], many: tuple[Mapping[str, Any], pd.DataFrame] | None = None
           ) -> Choice | None:
    """Baseline, candidates, scores and the statistics settings; None when nothing is left to compare.

    ``many``: (run, scored counts) of a run of more than MANY_MODELS models, whose candidates are its best
    few until others are picked by name."""
    left, right = st.columns([1, 2])
    keep_choice(state.COMPARE_BASELINE, models)
    baseline = left.selectbox("Baseline", models, key=state.COMPARE_BASELINE,
                              help="The model every candidate is compared with")
    others = [m for m in models if m != baseline]
    if many is not None:
        with right:
            candidates = many_models(state.COMPARE_CANDIDATES, *many, label="Candidates", leave_out=(baseline,))
    else:
        keep_choices(state.COMPARE_CANDIDATES, others)
        candidates = right.multiselect("Candidates", others, key=state.COMPARE_CANDIDATES,
                                       help="Each one is compared with the baseline on its own")
    keep_choices(state.COMPARE_SCORES, scores)
    picked = st.multiselect("Scores", scores, key=state.COMPARE_SCORES)
    resamples_col, seed_col, ties_col, holm_col = st.columns(4)
    resamples = resamples_col.number_input(
        "Resamples", min_value=100, max_value=100_000, value=2000, step=500, key=state.COMPARE_RESAMPLES,
        help="Bootstrap resamples of the interval, and random sign flips of the permutation test")
    seed = seed_col.number_input("Seed", min_value=0, value=0, step=1, key=state.COMPARE_SEED,
                                 help="The same seed gives the same intervals and p-values")
    ties = ties_col.number_input("Tie tolerance", min_value=0.0, value=1e-9, step=1e-9, format="%g",
                                 key=state.COMPARE_TIES,
                                 help="Per-datum differences this small count as ties (wins/ties/losses, test)")
    holm_col.markdown("&nbsp;")
    holm = holm_col.checkbox("Holm correction", value=True, key=state.COMPARE_HOLM,
                             help="Adjust the p-values for the number of comparisons (family-wise error rate)")
    if not candidates:
        st.warning("Pick at least one candidate.")
        return None
    if not picked:
        st.warning("Pick at least one score.")
        return None
    return Choice(baseline, list(candidates), list(picked), int(resamples), int(seed), float(ties), bool(holm))


# -- the table ---------------------------------------------------------------
def regressions_first(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows of the Holm family by verdict (worse, inconclusive, better, no difference), then the rows apart."""
    key = [(family == APART, VERDICT_RANK.get(v, 4)) for family, v in zip(frame["family"], frame["verdict"])]
    order = sorted(range(len(frame)), key=lambda i: key[i])
    ordered = frame.iloc[order].reset_index(drop=True)
    ordered.attrs = dict(frame.attrs)
    return ordered


def comparison_table(frame: pd.DataFrame, plan: float | None = None) -> pd.DataFrame:
    """The table as shown: a row per (candidate, score), raw numbers, the verdict after the p-values."""
    table = pd.DataFrame({
        "candidate": frame["candidate"], "score": frame["score"],
        "better": [ARROWS.get(d, "none") for d in frame["direction"]], "n": frame["n"],
        "baseline mean": frame["baseline_mean"], "candidate mean": frame["candidate_mean"],
        "delta": frame["delta"],
        "95% CI": [interval_text(lo, hi) for lo, hi in zip(frame["ci_low"], frame["ci_high"])],
        "p": frame["p_value"],
    })
    if frame.attrs.get("holm"):
        table["p (Holm)"] = frame["p_adjusted"]
    table["verdict"] = [verdict_words(v, lo, hi) for v, lo, hi in zip(frame["verdict"], frame["ci_low"],
                                                                        frame["ci_high"])]
    table.attrs["verdicts"] = list(frame["verdict"])  # the verdicts behind the words, for the colours
    table["why"] = frame["why"]
    table["mde"] = frame["mde"]
    if plan:
        alpha = frame.attrs.get("alpha", 0.05)
        table["datums needed"] = [needed(plan, spread, alpha) for spread in frame["spread"]]
    table["wins"], table["ties"], table["losses"] = frame["wins"], frame["ties"], frame["losses"]
    for role in ("baseline", "candidate"):
        table[f"{role} s/u/e/m"] = [f"{s} / {u} / {e} / {m}" for s, u, e, m in zip(
            frame[f"scored_{role}"], frame[f"unscored_{role}"], frame[f"empty_{role}"], frame[f"missing_{role}"])]
    return table.reset_index(drop=True)


def styled(table: pd.DataFrame) -> Styler:
    """Number formats, and green / red / orange behind the delta and verdict of decided rows."""
    def paint(column: pd.Series) -> list[str]:
        kinds = table.attrs.get("verdicts", list(table["verdict"]))
        return [f"background-color: {BACKGROUNDS[k]}" if k in BACKGROUNDS else "" for k in kinds]

    formats = {"baseline mean": "{:.4f}", "candidate mean": "{:.4f}", "delta": "{:+.4f}", "p": p_text,
               "p (Holm)": p_text, "mde": "{:.4f}", "datums needed": _count_text}
    return (table.style.apply(paint, subset=["delta", "verdict"])
            .format({k: v for k, v in formats.items() if k in table.columns}, na_rep="–"))


def table_section(frame: pd.DataFrame) -> None:
    attrs = frame.attrs
    st.subheader(f"Baseline: {plain(attrs['baseline'])}")
    filter_col, plan_col = st.columns(2)
    only = filter_col.toggle("Regressions only", key=state.COMPARE_REGRESSIONS,
                             help="Show only the scores where the candidate is significantly worse")
    plan = plan_col.number_input("Difference you care about", min_value=0.0, value=0.0, step=0.01, format="%g",
                                 key=state.COMPARE_PLAN,
                                 help="Adds 'datums needed': how many datums detect this difference with 80% "
                                      "power, for each row's observed spread of paired differences")
    shown = frame[frame["verdict"] == WORSE] if only else frame
    if only and shown.empty:
        st.success("No score is significantly worse for any candidate.")
    else:
        table = comparison_table(shown.reset_index(drop=True).pipe(_keep_attrs, attrs), plan or None)
        show_table(styled(table), hide_index=True, height=min(640, 38 + 35 * len(table)), placeholder="–")
    alpha = attrs.get("alpha", 0.05)
    p_used = "the Holm-adjusted p (p (Holm))" if attrs.get("holm") else "the unadjusted p"
    tests = ", ".join(dict.fromkeys(t for t in frame["test"] if t))
    st.caption(
        f"Verdict: better / worse when {p_used} < {alpha:g}, in the score's direction; otherwise not significant, "
        "which does not mean equal: the interval next to it is how large a difference the data still allow; "
        "inconclusive when fewer than 2 datums pair up, when the two models were scored on different datums "
        f"(exact McNemar test on 'has a score', p < {alpha:g}), or when a score without a better direction differs. "
        f"The {attrs['confidence']:.0%} CI is unadjusted ({plain(attrs['ci_method'])}; 'too few' below 2 pairs); "
        f"{attrs['resamples']} resamples, seed {attrs['seed']}. Test: {plain(tests or 'none')}, two-sided. "
        f"delta = candidate − baseline, raw: for a ↓ score a negative delta is an improvement. mde: the smallest "
        f"difference detected with 80% power at α {alpha:g} for the observed spread. Wins / ties / losses count "
        f"datums where the candidate is better / within {attrs['tie_tolerance']:g} / worse. s/u/e/m: scored / "
        "unscored / empty predictions / missing (no cell) datums of each model; the delta uses datums scored for both.")
    sensitivity_lines(frame)
    if attrs.get("apart"):
        st.caption(f"Listed last, apart from the Holm family (no better direction, unadjusted p): "
                   f"{plain(', '.join(attrs['apart']))}.")
    if attrs.get("note"):
        st.info(plain(attrs["note"].replace("p_adjusted", "p (Holm)")), icon=":material/info:")
    score_warnings.show(int(attrs["run_id"]), [score_warnings.parse(w) for w in attrs.get("warnings", [])])
    if attrs.get("undeclared"):
        st.warning(f"No metric declares the direction of {plain(', '.join(attrs['undeclared']))}: "
                   "counted as higher is better.")


def sensitivity_lines(frame: pd.DataFrame) -> None:
    """For rows made inconclusive by missingness: the comparison with missing and unscored cells at the worst value."""
    for row in frame.itertuples():
        if row.verdict != INCONCLUSIVE or "different datums" not in row.why or pd.isna(row.sensitivity_delta):
            continue
        st.warning(
            f"{plain(row.candidate)} / {plain(row.score)}: {plain(row.why)}. Counting missing and unscored cells "
            f"as {row.worst:g} (the worst value): delta {row.sensitivity_delta:+.4f} "
            f"{interval_text(row.sensitivity_ci_low, row.sensitivity_ci_high)}, p {p_text(row.sensitivity_p)}.",
            icon=":material/balance:")


def _keep_attrs(frame: pd.DataFrame, attrs: Mapping[str, Any]) -> pd.DataFrame:
    frame.attrs = dict(attrs)
    return frame


def _count_text(value: float) -> str:
    if value is None or pd.isna(value):
        return "–"
    return "more than 10⁸" if value == float("inf") else f"{int(value):,}"


def p_text(value: float) -> str:
    """A p-value as shown: four decimals, or scientific below 1e-4."""
    if value is None or pd.isna(value):
        return "–"
    return f"{value:.4f}" if value >= 1e-4 else f"{value:.1e}"


# -- per datum -----------------------------------------------------------------
def largest(pairs: pd.DataFrame, n: int, direction: str, tolerance: float) -> pd.DataFrame:
    """The ``n`` datums with the largest |delta| (dataset order among equals), with the outcome."""
    top = pairs.iloc[largest_first(pairs["diff"].abs().to_numpy(), n)].reset_index(drop=True)
    top["outcome"] = outcomes(top["diff"].to_numpy(), direction, tolerance) if len(top) else []
    return top


def pairs_section(run_id: int, run: Mapping[str, Any], choice: Choice) -> None:
    """Per-datum scatter of one score and one candidate, then its largest differences."""
    st.subheader("Per datum")
    score_col, candidate_col, top_col = st.columns([2, 2, 1])
    keep_choice(state.COMPARE_PAIR_SCORE, choice.scores)
    score = score_col.selectbox("Score", choice.scores, key=state.COMPARE_PAIR_SCORE)
    keep_choice(state.COMPARE_PAIR_CANDIDATE, choice.candidates)
    candidate = candidate_col.selectbox("Candidate", choice.candidates, key=state.COMPARE_PAIR_CANDIDATE)
    top_n = top_col.number_input("Largest differences", min_value=1, max_value=200, value=TOP_DEFAULT,
                                 key=state.COMPARE_TOP_N)
    try:
        pairs = compare_data.paired(run_id, choice.baseline, candidate, score)
    except TextgenError as exc:
        st.warning(plain(str(exc)))
        return
    direction = pairs.attrs.get("direction", "higher")
    st.plotly_chart(scatter_figure(pairs, score, choice.baseline, candidate, direction, choice.tie_tolerance),
                    key=state.COMPARE_SCATTER)
    shown = min(len(pairs), MAX_POINTS)  # what thin() keeps
    st.caption(f"{len(pairs)} datums scored for both; above the diagonal the candidate scores higher"
               + (f"; {shown} points drawn (the largest differences and an even sample)." if shown < len(pairs)
                  else "."))
    top = largest(pairs, int(top_n), direction, choice.tie_tolerance)
    texts = compare_data.datum_texts(run["dataset_id"], top["datum_id"], [choice.baseline, candidate])
    table = top.merge(texts, on="datum_id", how="left")
    table = table[["datum_id", "baseline", "candidate", "diff", "outcome", "query", "prediction_1", "prediction_2"]]
    st.caption(f"Largest differences: baseline {plain(choice.baseline)}, candidate {plain(candidate)}. "
               "Select a row to open the datum in Explore: both predictions side by side, every verdict.")
    number = st.column_config.NumberColumn
    show_table(table, hide_index=True, key=state.COMPARE_TOP, selection_mode="single-row",
                 on_select=partial(_pick, list(table["datum_id"])), column_config={
                     "baseline": number("baseline", format="%.4f"), "candidate": number("candidate", format="%.4f"),
                     "diff": number("delta", format="%+.4f"), "outcome": st.column_config.TextColumn("candidate is"),
                     "prediction_1": st.column_config.TextColumn("baseline answer"),
                     "prediction_2": st.column_config.TextColumn("candidate answer")}, placeholder="–")


def _pick(datum_ids: list[str]) -> None:
    """Selection callback of the largest-differences table: remember the datum to open."""
    selected = st.session_state[state.COMPARE_TOP].selection.rows
    if selected and selected[0] < len(datum_ids):
        st.session_state[state.COMPARE_OPEN] = datum_ids[selected[0]]
