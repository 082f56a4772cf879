"""Explore: search datums by text, model and score; read one datum with its verdicts."""

import streamlit as st

from ui.explore import render
from ui.shell import within_navigation
from ui.state import RESULTS_RUN

within_navigation(__file__)
render(default_run=st.session_state.get(RESULTS_RUN))
