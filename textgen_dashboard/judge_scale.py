"""The judge settings form, generated from the settings table, and live spend against the cap.

Every input comes from one row of :data:`textgen_core.judge.settings.SETTINGS` (its label, default, bounds or
choices, help, and where the form shows it); settings the form does not show take a stored run's value, else
their default. The form is rendered on Evaluate, on Runs (resume) and on Criteria; it starts from a saved judge
profile when one is picked, else from the settings this browser session typed last on any page.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Mapping

import streamlit as st

from textgen_core.errors import ParameterError
from textgen_core.judge.settings import (DEFAULT_BASE_URL, ENV_API_KEY, ENV_OPENAI_API_KEY, SETTINGS, JudgeSettings,
                                         REQUIRED, Setting)

from textgen_core.errors import TextgenError

from . import data
from .safe_text import plain
from .state import JUDGE_LAST, JUDGE_PROFILE, JUDGE_SAVED, NO_PROFILE, judge_key

#: Title of the expander holding the settings for real endpoints (the README names it).
EXPANDER = "Rate limits, spending cap, Batch API, Azure, structured output"
_SECRET_NAMES = (ENV_API_KEY, ENV_OPENAI_API_KEY)
#: Settings a resumed run takes from its stored ones (caps are given anew).
_RESUMED = {s.name for s in SETTINGS if s.resumed and not s.secret}


def _configured(*names: str) -> tuple[str, str]:
    """(value, where it came from) of the first of ``names`` set in st.secrets, else in the environment."""
    try:
        if st.secrets.load_if_toml_exists():
            for name in names:
                value = st.secrets.get(name)
                if isinstance(value, str) and value.strip():
                    return value.strip(), f"secrets ({name})"
    except Exception:  # an unreadable secrets file: fall back to the environment
        pass
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            return value, f"the environment ({name})"
    return "", ""


def judge_form(page: str, defaults: Mapping[str, Any] | None = None) -> tuple[JudgeSettings | None, str | None]:
    """Judge endpoint inputs; returns (settings, None) or (None, what is missing or wrong).

    The key is typed into a password input or read from secrets/environment; it is
    never put into any other widget, never shown, and only ``public()`` is stored.
    """
    key = lambda name: judge_key(page, name)  # noqa: E731
    profile = _profile_picker(page)
    remembered = profile or st.session_state.get(JUDGE_LAST) or {}
    # a resumed run's stored settings win over what this session typed last (a picked profile wins over both)
    stored = {name: v for name, v in dict(defaults or {}).items() if name in _RESUMED}
    given = {**remembered, **stored} if not profile else {**stored, **profile}
    values: dict[str, Any] = {}
    left, right = st.columns(2)
    with left:
        values |= _inputs("endpoint", key, given)
    with right:
        values |= _inputs("sampling", key, given)
    with st.expander(EXPANDER):
        limits, caps = st.columns(2)
        with limits:
            values |= _inputs("limits", key, given)
        with caps:
            values |= _inputs("caps", key, given)
    hidden = {s.name: given[s.name] if s.resumed and given.get(s.name) is not None else s.default
              for s in SETTINGS if s.place is None}
    if not values["model"]:
        return None, "set the judge model (and base URL) to run judge or endpoint metrics"
    try:
        settings = JudgeSettings(**hidden, **values)
    except ParameterError as exc:
        return None, str(exc)
    shown = {s.name: values[s.name] for s in SETTINGS if s.place is not None and not s.secret and s.name in values}
    st.session_state[JUDGE_LAST] = shown  # the next page that asks a judge starts from these (never the key)
    _save_profile(page, shown)
    return settings, None


def _profile_picker(page: str) -> dict[str, Any] | None:
    """A picker of the saved judge profiles (none: the settings typed last); the picked one's settings."""
    profiles = data.store().judge_profiles()
    if profiles.empty:
        return None
    names = list(profiles["name"])
    if st.session_state.get(JUDGE_PROFILE) not in [NO_PROFILE, *names]:
        st.session_state[JUDGE_PROFILE] = NO_PROFILE
    picked = st.selectbox("Judge profile", [NO_PROFILE, *names], key=JUDGE_PROFILE, persist_state="session",
                          on_change=_forget_inputs, args=(page,),
                          help="Saved judge settings (base URL, model, prices, limits; never the key), kept in "
                               "the database and offered on every page that asks a judge")
    if picked == NO_PROFILE:
        return None
    return dict(profiles.loc[profiles["name"] == picked, "settings"].iloc[0])


def _forget_inputs(page: str) -> None:
    """Another profile was picked: this page's inputs start again from it (the typed key stays)."""
    for s in SETTINGS:
        if not s.secret:
            st.session_state.pop(judge_key(page, s.name), None)


def _save_profile(page: str, settings: Mapping[str, Any]) -> None:
    with st.popover("Save as a judge profile", icon=":material/bookmark_add:"):
        name = st.text_input("Profile name", key=judge_key(page, "profile_name"),
                             value=st.session_state.get(JUDGE_PROFILE, "") if st.session_state.get(
                                 JUDGE_PROFILE) != NO_PROFILE else "")
        st.caption("Stores the base URL, model, prices and limits in this database; never the API key.")
        if st.button("Save profile", key=judge_key(page, "profile_save"), disabled=not name.strip()):
            try:
                data.store().save_judge_profile(name.strip(), dict(settings))
            except (ValueError, TextgenError) as exc:
                st.error(plain(str(exc)))
                return
            st.session_state[JUDGE_PROFILE] = name.strip()
            st.session_state[JUDGE_SAVED] = f"Saved the judge profile {plain(name.strip())}."
            st.rerun()
    saved = st.session_state.pop(JUDGE_SAVED, None)
    if saved:
        st.success(saved)


def _inputs(place: str, key: Callable[[str], str], given: Mapping[str, Any]) -> dict[str, Any]:
    return {s.name: setting_input(s, key(s.name), given) for s in SETTINGS if s.place == place}


def setting_input(s: Setting, key: str, given: Mapping[str, Any]) -> Any:
    """One input for one judge setting, with its declared default, bounds or choices and help; returns its value."""
    if s.secret:
        typed = st.text_input(s.label, type="password", key=key, help=s.help,
                              placeholder="leave empty to use secrets or the environment")
        stored, source = _configured(*_SECRET_NAMES)
        st.caption("Key: typed above." if typed else f"Key: from {source}." if source else "Key: none (fine for "
                   "local endpoints that need none).")
        return (typed or stored).strip()
    value = given.get(s.name) if given.get(s.name) is not None else None
    if value is None and s.env:
        value = _configured(s.env)[0] or None
    if value is None:
        value = DEFAULT_BASE_URL if s.name == "base_url" else None if s.default is REQUIRED else s.default
    if s.kind == "bool":
        return bool(st.checkbox(s.label, value=bool(value), key=key, help=s.help))
    if s.kind == "names":
        text = st.text_input(s.label, value=", ".join(value or ()), key=key, help=s.help)
        return tuple(name.strip() for name in text.split(",") if name.strip())
    if s.choices:
        # a setting whose default is decided per metric offers that first, in words
        options = ((s.default_text(),) if s.default is None else ()) + s.choices
        picked = st.selectbox(s.label, options, key=key, help=s.help,
                              index=options.index(value) if value in options else 0)
        return picked if picked in s.choices else None
    if s.kind == "str":
        text = st.text_input(s.label, value=value or "", key=key, help=s.help).strip()
        return text or (None if s.default is None else text)
    number = int if s.kind == "int" else float
    bounds = {"min_value": None if s.low is None else number(s.low),
              "max_value": None if s.high is None or s.high == float("inf") else number(s.high)}
    got = st.number_input(s.label, value=None if value is None else number(value), key=key, help=s.help,
                          **({"step": 1} if s.kind == "int" else {}), **bounds)
    return None if got is None else number(got)


def spend_against_cap(prompt_tokens: int, completion_tokens: int, judge: Any, spent_before: float = 0.0) -> None:
    """The run's judge cost so far, against its cap when one is set (nothing without prices)."""
    if judge is None:
        return
    cost = judge.price(prompt_tokens, completion_tokens)
    if cost is None:
        return
    spent = spent_before + cost
    mode = " at batch prices" if judge.batch else ""
    if judge.max_cost:
        st.progress(min(1.0, spent / judge.max_cost),
                    text=f"Spend ${spent:.4f} of the ${judge.max_cost:g} cap{mode}")
    else:
        st.caption(f"Spend so far: ${spent:.4f}{mode}")
    if judge.max_calls is not None:
        st.caption(f"Stops before {judge.max_calls:,} judge calls.")
