"""The judge-call estimate a page shows before anything is sent (Evaluate, and Add metrics on Runs).

Its numbers are the library's (``textgen_core.runs.jury.estimate_jury`` through ``data.judge_estimate``); this
module only says in words what each one counts.
"""

from __future__ import annotations

import json
from typing import Any

import streamlit as st

from textgen_core.judge.settings import JudgeSettings
from textgen_core.runs.panel import Jury

from . import data
from .safe_text import plain


def show_estimate(dataset_id: int, models: list[str], judged: dict[str, dict[str, Any]], judge: JudgeSettings,
                  jury: Jury | None = None) -> None:
    """Judge calls, tokens and cost before anything is sent (every panel member and sample counted)."""
    if not judged or not models:
        return
    try:
        found = data.judge_estimate(dataset_id, tuple(models), json.dumps(judged, sort_keys=True, default=list),
                                    json.dumps(judge.public(), sort_keys=True),
                                    json.dumps(jury.public() if jury else {}, sort_keys=True))
    except Exception as exc:  # an estimate must never block the page
        st.warning(f"No estimate: {plain(exc)}")
        return
    calls, cached, tokens, cost = st.columns(4)
    dependent = found.get("dependent") or 0
    calls.metric("Judge calls (estimate)",
                 f"{found['calls'] - dependent:,}–{found['calls']:,}" if dependent else f"{found['calls']:,}",
                 help=f"A range: {dependent:,} of the calls are verdicts on the statements or opinions an "
                      "extraction finds, so how many are asked depends on the judge's replies. Cached replies "
                      "are not counted; retries of failed calls are not either." if dependent else
                      "Exact: every prompt is known before the run. Cached replies are not counted; retries of "
                      "failed calls are not either.")
    cached.metric("From cache", f"{found['cached']:,}", help="Questions asked before: answered from the reply "
                  "cache, free and not sent")
    tokens.metric("Tokens (est.)", f"{found['prompt_tokens'] + found['completion_tokens']:,}",
                  help=f"{found['prompt_tokens']:,} prompt + {found['completion_tokens']:,} completion")
    if found["cost"] is None:
        cost.metric("Cost (est.)", "set prices")
    else:  # direct calls and the Batch API side by side
        direct, batch = (judge.price(found["prompt_tokens"], found["completion_tokens"], batch=b) for b in (False, True))
        cost.metric("Cost (est.)", f"{direct:.4f} / {batch:.4f}",
                    help=f"direct calls / Batch API (at {judge.batch_discount:g} of the price"
                         f"{', chosen' if judge.batch else ''})")
