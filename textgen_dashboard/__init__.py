"""The Streamlit dashboard: its navigation (app.py), page scripts (views/), render modules and one data module.

Importing this package does not import Streamlit: the CLI only asks it where the app is.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def app_path() -> Path:
    """The dashboard's main script inside the installed package: what `streamlit run` serves."""
    return PACKAGE_DIR / "app.py"


def page_path(name: str) -> Path:
    """The script of one page ('home', 'upload', 'results', ...), for st.Page, st.page_link and st.switch_page."""
    return PACKAGE_DIR / "views" / f"{name}.py"
