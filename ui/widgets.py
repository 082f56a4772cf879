"""Small widgets shared by the dashboard pages.

The metric parameter form is generated from each metric's ``Param``
declarations; nothing here lists a metric or a parameter by hand.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable

import streamlit as st

from textgen_core.errors import ParameterError
from textgen_core.metrics.spec import MetricSpec, Param

_MARKDOWN_SPECIALS = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")
#: Pages of the app, relative to app.py (navigation is declared in app.py).
APP_ROOT = Path(__file__).resolve().parent.parent


def plain(text: object) -> str:
    """Text safe to put inside markdown: every markdown or HTML character is escaped."""
    return _MARKDOWN_SPECIALS.sub(r"\\\1", str(text))


def link(page: str, label: str, icon: str | None = None) -> None:
    """A link to another page; a caption when the page is not in the navigation (one-page tests)."""
    try:
        st.page_link(page, label=label, icon=icon)
    except Exception:  # the page runs on its own, outside app.py's st.navigation
        st.caption(f"Open {plain(label)} from the navigation.")


def param_widget(param: Param, key: str, columns: list[str]) -> Any:
    """One input for one parameter, with its declared default, limits and help."""
    label, default, help_text = param.name, param.default, param.help
    low = param.minimum
    high = param.maximum
    if param.kind == "bool":
        return st.checkbox(label, value=bool(default), key=key, help=help_text)
    if param.kind == "int":
        return st.number_input(label, value=default, step=1, key=key, help=help_text,
                               min_value=None if low is None else int(low),
                               max_value=None if high is None else int(high))
    if param.kind == "float":
        return st.number_input(label, value=None if default is None else float(default), key=key, help=help_text,
                               min_value=None if low is None else float(low),
                               max_value=None if high is None else float(high), format="%g")
    if param.kind == "choice":
        options = list(param.choices)
        index = options.index(default) if default in options else 0
        return st.selectbox(label, options, index=index, key=key, help=help_text, format_func=str)
    if param.kind == "choices":
        chosen = [d for d in (default or ()) if d in param.choices]
        return st.multiselect(label, list(param.choices), default=chosen, key=key, help=help_text)
    if param.kind == "floats":
        text = ", ".join(f"{v:g}" for v in default) if default else ""
        return st.text_input(label, value=text, key=key, help=help_text)
    if param.is_column:
        options = ["", *columns]
        index = options.index(default) if default in options else 0
        picked = st.selectbox(label, options, index=index, key=key, help=help_text,
                              format_func=lambda c: c or "(none)")
        return picked or None
    text = st.text_input(label, value="" if default is None else str(default), key=key, help=help_text)
    return text if text != "" else None


def param_form(spec: MetricSpec, key_of: Callable[[str], str], columns: list[str]) -> tuple[dict[str, Any], list[str]]:
    """Inputs for every parameter of ``spec``; returns (validated values, error messages)."""
    raw = {p.name: param_widget(p, key_of(p.name), columns) for p in spec.params}
    try:
        return spec.resolve(raw), []
    except ParameterError as exc:
        return {}, [str(exc)]


def describe_reasons(reasons: list[str]) -> str:
    """'needs a contexts column; needs ...' for a disabled metric."""
    return "; ".join(reasons)
