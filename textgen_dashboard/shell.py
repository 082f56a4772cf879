"""Keeping every page inside the one navigation that app.py declares.

When the very first request to a fresh server is a deep link such as
``/explore?run=1&datum=q07``, Streamlit runs that page file on its own, with
the raw ``pages/`` file list and without app.py's layout or database check.
A page calls :func:`within_navigation` first: outside the navigation it hands
the wanted page and its query parameters to app.py, which opens it properly.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from .state import SHELL_NAVIGATED, SHELL_PENDING


def within_navigation(page_file: str) -> None:
    """Call at the top of a page file; redirects through app.py when it was run on its own."""
    if st.session_state.get(SHELL_NAVIGATED) or _is_entry_script(page_file):
        return
    st.session_state[SHELL_PENDING] = (page_file, dict(st.query_params))
    st.switch_page("app.py")


def navigation_ready() -> None:
    """Called by app.py right after st.navigation: opens a page a deep link asked for."""
    st.session_state[SHELL_NAVIGATED] = True
    pending = st.session_state.pop(SHELL_PENDING, None)
    if pending:
        page_file, query = pending
        st.switch_page(page_file, query_params=query or None)


def _is_entry_script(page_file: str) -> bool:
    """True when the page itself was started as the app (AppTest of one page file)."""
    ctx = get_script_run_ctx()
    return ctx is None or Path(ctx.main_script_path).resolve() == Path(page_file).resolve()
