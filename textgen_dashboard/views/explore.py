"""Explore: search datums by text, model and score; read one datum with its verdicts."""

import streamlit as st

from textgen_dashboard.explore import render
from textgen_dashboard.state import RESULTS_RUN

if __name__ == "__main__":  # not in a spawned worker (see views/__init__.py)
    render(default_run=st.session_state.get(RESULTS_RUN))
