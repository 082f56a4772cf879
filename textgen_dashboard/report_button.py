"""The "Download report" button of Results and Compare: the run, and the comparison on screen, as one HTML file.

The file is made when the button is clicked (Streamlit calls :func:`report_bytes`
on its own thread), by :mod:`textgen_core.report` from the store: nothing is
judged again. A key typed into a judge form of this session, or kept in
Streamlit's secrets, is scrubbed from it like the environment's keys.
"""

from __future__ import annotations

import re
from typing import Any

import streamlit as st

from textgen_core.judge.settings import ENV_API_KEY, ENV_OPENAI_API_KEY
from textgen_core.report import ReportOptions, build_report, report_text
from textgen_core.store import Store

from . import data


def report_bytes(store: Store, run_id: int, options: ReportOptions) -> bytes:
    """The report's HTML, encoded."""
    return report_text(build_report(store, run_id, options)).encode("utf-8")


def typed_keys() -> tuple[str, ...]:
    """API keys this session knows: typed into a judge form (password inputs end in '.api_key'), or in st.secrets."""
    found = [str(value) for name, value in st.session_state.items()
             if str(name).endswith(".api_key") and isinstance(value, str) and value.strip()]
    try:
        if st.secrets.load_if_toml_exists():
            found += [str(st.secrets.get(n)) for n in (ENV_API_KEY, ENV_OPENAI_API_KEY) if st.secrets.get(n)]
    except Exception:  # an unreadable secrets file holds no key the report could leak
        pass
    return tuple(key.strip() for key in found if key.strip())


def report_button(run_id: int, choice: Any = None) -> None:
    """A download button for the report of ``run_id``; with the Compare page's ``choice`` (baseline, candidates,
    scores, resamples, seed, tie_tolerance, holm), the report holds that comparison too."""
    options = ReportOptions(secrets=typed_keys()) if choice is None else ReportOptions(
        baseline=choice.baseline, candidates=tuple(choice.candidates) or None, scores=tuple(choice.scores) or None,
        resamples=choice.resamples, seed=choice.seed, tie_tolerance=choice.tie_tolerance, holm=choice.holm,
        secrets=typed_keys())
    store = data.store()  # taken here: the file is made on another thread, outside this script run
    name = f"run-{run_id}" + (f"-vs-{choice.baseline}" if choice is not None else "")
    st.download_button(
        "Download report", data=lambda: report_bytes(store, run_id, options),
        file_name=re.sub(r"[^A-Za-z0-9_.-]+", "_", name) + "-report.html", mime="text/html", on_click="ignore",
        key=f"report.download.{'results' if choice is None else 'compare'}",
        help="One HTML file to send: what was run, means with intervals"
             + (", this comparison" if choice is not None else "") + ", the judge's reliability and the rows with "
             "their verdicts. It opens offline in any browser and prints to PDF.")
