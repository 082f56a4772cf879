"""The pairwise preference judge's per-model table, shown on the Compare and Results pages.

Numbers come from :func:`textgen_core.compare.pairwise.pairwise_summary` through :mod:`.data` (cached).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from . import compare_data, data
from .safe_text import plain
from .widgets import show_table


def pairwise_section(run_id: int) -> None:
    """Wins, ties, losses, win rate, flip rate and length bias of the pairwise judge, when the run has it."""
    summary = compare_data.pairwise(run_id)
    if summary.empty:
        return
    st.subheader(f"Pairwise preference against {plain(str(summary['baseline'].iloc[0]))}")
    number = st.column_config.NumberColumn
    table = summary.assign(interval=["too few" if pd.isna(lo) or pd.isna(hi) else f"[{lo:.3f}, {hi:.3f}]"
                                     for lo, hi in zip(summary["ci_low"], summary["ci_high"])])
    show_table(table[["candidate", "wins", "ties", "losses", "order_inconsistent", "unscored", "win_rate",
                        "interval", "flip_rate", "longer_preferred", "length_verdicts"]], hide_index=True,
                 column_config={
                     "order_inconsistent": number("flips"), "win_rate": number("win rate", format="%.3f"),
                     "interval": st.column_config.TextColumn(f"{summary.attrs['confidence']:.0%} CI"),
                     "flip_rate": number("flip rate", format="%.2f"),
                     "longer_preferred": number("longer preferred", format="%.2f"),
                     "length_verdicts": number("of verdicts")}, placeholder="–")
    st.caption("The judge saw each pair twice, baseline first and candidate first; a pair is won or lost only "
               "when both orders agree. Flips: the orders disagreed (counted as a tie, 0.5). Win rate: the mean "
               "cell with a bootstrap percentile interval. Longer preferred: share of single-order verdicts that "
               "picked the longer answer; near 1 the judge rewards length. Open a datum in Explore to read "
               "both answers and both verdicts.")
