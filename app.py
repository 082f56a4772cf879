"""textgen-eval dashboard: the navigation is declared here, and only here.

Run with `textgen-eval dashboard` (or `streamlit run app.py`); the database is
$TEXTGEN_EVAL_DB, else textgen_eval.duckdb in the working directory.
"""

from pathlib import Path

import streamlit as st

from textgen_dashboard.home import database_ready, render_sidebar
from textgen_dashboard.home import render as render_home
from textgen_dashboard.shell import navigation_ready

ROOT = Path(__file__).resolve().parent
#: (file, title, icon) of every page after Home, in menu order; a page whose file is absent is left out.
PAGES = (
    ("pages/upload.py", "Upload", ":material/upload_file:"),
    ("pages/evaluate.py", "Evaluate", ":material/play_arrow:"),
    ("pages/results.py", "Results", ":material/table_chart:"),
    ("pages/explore.py", "Explore", ":material/search:"),
    ("pages/compare.py", "Compare", ":material/compare_arrows:"),
    ("pages/runs.py", "Runs", ":material/history:"),
)

st.set_page_config(page_title="textgen-eval", page_icon=":material/analytics:", layout="wide")
home = st.Page(render_home, title="Home", icon=":material/home:", url_path="home", default=True)
pages = [home] + [st.Page(path, title=title, icon=icon) for path, title, icon in PAGES if (ROOT / path).is_file()]
current = st.navigation(pages)
navigation_ready()
render_sidebar()
if database_ready():
    current.run()
