"""Widgets the result pages share: the run picker, choices that survive a change of run, the score
range slider, the way to open one datum in Explore, and the hint shown before any run exists."""

from __future__ import annotations

from typing import Any, Mapping, NoReturn, Sequence

import pandas as pd
import streamlit as st

from textgen_core.summary import MODELS_SHOWN, ranked_models

from . import data, page_path
from .address import asked_run
from .safe_text import plain
from .state import EXPLORE_DATUM, EXPLORE_PAGE, EXPLORE_RUN, OTHER_RUN


def runs_or_hint() -> pd.DataFrame | None:
    """Every run, newest first; None (after saying how to make one) when there is none yet."""
    runs = data.runs()
    if runs.empty:
        st.info("No runs yet. Load the sample dataset on Home, or score a dataset on Evaluate.")
        return None
    return runs


def run_label(run: Mapping[str, Any]) -> str:
    """'#7 · week-48 candidate · [prod, nightly] · sample · finished · bleu, rouge' for a row of the runs table
    (the name and the tags only where the run has them)."""
    metrics = ", ".join(run.get("metrics") or [])
    name = run.get("name")
    named = f" · {name}" if isinstance(name, str) and name else ""
    tags = list(run.get("tags") if run.get("tags") is not None else [])
    tagged = f" · [{', '.join(map(str, tags))}]" if len(tags) else ""
    return (f"#{run['run_id']}{named}{tagged} · {run.get('dataset') or 'deleted dataset'} · {run.get('status')} · "
            f"{metrics}")


def keep_choice(key: str, options: Sequence[Any], default: Any = None) -> None:
    """Reset a selectbox's stored value when it is no longer among its options (another run...)."""
    if options and st.session_state.get(key) not in options:
        st.session_state[key] = default if default in options else options[0]


def keep_choices(key: str, options: Sequence[Any]) -> None:
    """Drop stored multiselect values that are no longer options; all options when none is left."""
    stored = st.session_state.get(key)
    kept = [v for v in stored or [] if v in options]
    if stored is None or (stored and not kept):
        kept = list(options)
    st.session_state[key] = kept


#: A run of more models than this shows its best few by default; the rest are picked by name, this many at most.
MANY_MODELS = 50


def many_models(key: str, run: Mapping[str, Any], counts: pd.DataFrame, *, label: str = "Models",
                default: int = MODELS_SHOWN, leave_out: Sequence[str] = ()) -> list[str]:
    """The model multiselect of a run of more than :data:`MANY_MODELS` models: best first, the ``default``
    best (by the mean of the run's first score) chosen until the user picks others, at most MANY_MODELS at
    once, with a line saying how many of how many are shown. ``counts``: the run's scored counts."""
    ranked, first = ranked_models(counts, run)
    options = [m for m in ranked if m not in leave_out]
    known = set(options)
    stored = st.session_state.get(key)
    kept = [m for m in stored or [] if m in known][:MANY_MODELS]
    st.session_state[key] = options[:default] if stored is None or (stored and not kept) else kept
    chosen = st.multiselect(label, options, key=key, max_selections=MANY_MODELS, persist_state="session",
                            help=f"Type to find a model; at most {MANY_MODELS} at once")
    by = f"the {default} best by mean {first} are shown until you pick others" if first else "pick models by name"
    st.caption(f"Showing {len(chosen)} of {len(options):,} models ({by}; the list is best first, at most "
               f"{MANY_MODELS} at once; 'textgen-eval export' writes every model's scores).")
    return list(chosen)


def pick_run(runs: pd.DataFrame, key: str, default: Any = None, resets: Sequence[str] = ()) -> int:
    """A run selectbox, newest first; picking another run clears the ``resets`` keys (its filters).

    A run the address asks for (``?run=N``) that this database does not hold is said so, and the page
    stops there: nothing of another run is shown in its place."""
    ids = [int(r) for r in runs["run_id"]]
    labels = {int(row["run_id"]): run_label(row) for row in runs.to_dict("records")}
    asked = asked_run()
    if asked is not None and asked not in {str(i) for i in ids}:
        _unknown_run(asked, ids, labels)
    keep_choice(key, ids, None if default is None else int(default))
    relabel(key, labels)
    return int(st.selectbox("Run", ids, key=key, format_func=labels.get, on_change=_forget, args=(resets,),
                            persist_state="session"))


def relabel(key: str, labels: Mapping[Any, str]) -> None:
    """Before a keyed selectbox: when the text of its chosen option changed since the last run (a run renamed or
    tagged), set the choice again, so that the browser shows the new text (it keeps the text it was sent)."""
    chosen = st.session_state.get(key)
    seen = st.session_state.get(key + ".shown")
    if chosen is not None and seen is not None and seen != labels.get(chosen):
        st.session_state[key] = chosen
    st.session_state[key + ".shown"] = labels.get(chosen)


def _unknown_run(asked: str, ids: list[int], labels: dict[int, str]) -> NoReturn:
    st.error(f"There is no run {plain(asked)} in this database: it was deleted, or the link was made on another "
             "database. Nothing on this page belongs to it.")
    other = st.selectbox("Open another run", ids, index=None, placeholder="Pick a run", format_func=labels.get,
                         key=OTHER_RUN)
    if other is not None:
        st.query_params["run"] = str(other)
        st.rerun()
    st.stop()


def _forget(keys: Sequence[str]) -> None:
    for key in keys:
        st.session_state.pop(key, None)


def open_datum(run_id: int, datum_id: str) -> NoReturn:
    """Show one datum of a run on the Explore page (from any page)."""
    st.session_state[EXPLORE_RUN] = int(run_id)
    st.session_state[EXPLORE_DATUM] = str(datum_id)
    st.switch_page(page_path(EXPLORE_PAGE), query_params={"run": str(run_id), "datum": str(datum_id)})


def open_requested(run_id: int, key: str) -> None:
    """Open on Explore the datum this page's table asked for on the last rerun (its row stored under ``key``)."""
    target = st.session_state.pop(key, None)
    if target is not None:
        open_datum(run_id, target)


def score_range(rows: pd.DataFrame, key: str) -> tuple[float | None, float | None]:
    """A range slider over a score's observed values (summary rows); None ends while it spans them."""
    lo, hi = rows["min"].min(), rows["max"].max()
    if pd.isna(lo) or pd.isna(hi) or float(lo) >= float(hi):
        return None, None
    lo, hi = float(lo), float(hi)
    picked = st.slider("Score range", lo, hi, (lo, hi), step=(hi - lo) / 100, format="%.4g", key=key)
    return (None if picked[0] <= lo else float(picked[0])), (None if picked[1] >= hi else float(picked[1]))
