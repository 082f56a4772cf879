"""Explore: search datums by text, model and score; read one datum with its verdicts."""

import streamlit as st

from ui.explore import render
from ui.results import RESULTS_RUN

render(default_run=st.session_state.get(RESULTS_RUN))
