"""The dashboard's main script: the navigation is declared here, and only here.

`textgen-eval dashboard` serves this file from the installed package; in a checkout,
`streamlit run app.py` runs it through the root app.py. The database is
$TEXTGEN_EVAL_DB, else textgen_eval.duckdb in the working directory.

The page scripts live in views/, not pages/: a pages/ folder next to the main
script switches Streamlit to its legacy multipage mode, which serves a deep link
(``/explore?run=1``) outside this navigation.
"""

import streamlit as st

from textgen_dashboard import data, page_path
from textgen_dashboard.home import database_ready, render_sidebar

#: (page name, title, icon) of every page, in menu order; the first one opens by default.
#: Emoji icons only: a ``:material/...:`` icon makes the browser fetch it from a public font server.
PAGES = (
    ("home", "Home", "🏠"),
    ("upload", "Upload", "📤"),
    ("evaluate", "Evaluate", "▶️"),
    ("results", "Results", "📊"),
    ("explore", "Explore", "🔎"),
    ("compare", "Compare", "⚖️"),
    ("label", "Label", "🏷️"),
    ("criteria", "Judge criteria", "📝"),
    ("runs", "Runs", "🗂️"),
)


def main() -> None:
    """One script run: page settings, navigation, sidebar, then the chosen page if the database opens."""
    st.set_page_config(page_title="textgen-eval", page_icon="📏", layout="wide")
    pages = [st.Page(page_path(name), title=title, icon=icon, default=index == 0)
             for index, (name, title, icon) in enumerate(PAGES)]
    current = st.navigation(pages)
    render_sidebar()
    if database_ready():
        with data.store().session():  # the database file is opened once for the page's reads, closed after
            current.run()


if __name__ == "__main__":
    main()
