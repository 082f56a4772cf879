"""Judge settings for real endpoints (rate limits, spending caps, Batch API, Azure) and live spend against the cap.

Rendered inside the judge settings form (:func:`textgen_dashboard.widgets.judge_form`)
and the job panel; the values become :class:`~textgen_core.judge.settings.JudgeSettings`
fields (``rpm``, ``tpm``, ``max_cost``, ``max_calls``, ``batch``, ``api_version``, ``response_mode``).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import streamlit as st

from textgen_core.judge.settings import RESPONSE_MODES

#: Title of the expander holding these settings (the README names it).
EXPANDER = "Rate limits, spending cap, Batch API, Azure, structured output"


def scale_inputs(key: Callable[[str], str], given: Mapping[str, Any], tip: Mapping[str, str]) -> dict[str, Any]:
    """Inputs for rate limits, caps, batch mode and Azure; returns JudgeSettings keyword arguments."""
    with st.expander(EXPANDER):
        left, right = st.columns(2)
        with left:
            rpm = st.number_input("Requests per minute", min_value=1, step=1, value=given.get("rpm"),
                                  key=key("rpm"), help=tip["rpm"])
            tpm = st.number_input("Tokens per minute", min_value=1, step=1000, value=given.get("tpm"),
                                  key=key("tpm"), help=tip["tpm"])
            api_version = st.text_input("Azure api-version", value=given.get("api_version") or "",
                                        key=key("api_version"), help=tip["api_version"],
                                        placeholder="empty unless the base URL is an Azure OpenAI resource")
        with right:
            # Caps are not carried over from a stored run: resuming one usually means going past its cap.
            max_cost = st.number_input("Stop at cost (USD)", min_value=0.0, value=None,
                                       key=key("max_cost"), help=tip["max_cost"], format="%.4f")
            max_calls = st.number_input("Stop at judge calls", min_value=0, step=1, value=None,
                                        key=key("max_calls"), help=tip["max_calls"])
            batch = st.checkbox("Batch API (half price, slower)", value=bool(given.get("batch")), key=key("batch"),
                                help=tip["batch"])
            mode = given.get("response_mode") or "auto"
            response_mode = st.selectbox("Structured output", RESPONSE_MODES, key=key("response_mode"),
                                         index=RESPONSE_MODES.index(mode) if mode in RESPONSE_MODES else 0,
                                         help=tip["response_mode"])
    return {"rpm": None if rpm is None else int(rpm), "tpm": None if tpm is None else int(tpm),
            "api_version": api_version.strip() or None, "max_cost": max_cost,
            "max_calls": None if max_calls is None else int(max_calls), "batch": bool(batch),
            "response_mode": response_mode}


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
