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
#: Material icons: Streamlit ships their font, so they render offline and without an emoji font. Only the
#: browser tab's icon (page_icon) must not be one: the browser would fetch that one from a public server.
PAGES = (
    ("home", "Home", ":material/home:"),
    ("upload", "Upload", ":material/upload_file:"),
    ("evaluate", "Evaluate", ":material/play_arrow:"),
    ("results", "Results", ":material/bar_chart:"),
    ("explore", "Explore", ":material/search:"),
    ("compare", "Compare", ":material/compare_arrows:"),
    ("history", "History", ":material/timeline:"),
    ("label", "Label", ":material/label:"),
    ("criteria", "Judge criteria", ":material/rule:"),
    ("runs", "Runs", ":material/history:"),
)
#: The browser tab's icon: an emoji Streamlit turns into an inline image (nothing fetched).
PAGE_ICON = "📏"


def main() -> None:
    """One script run: page settings, navigation, sidebar, then the chosen page if the database opens."""
    st.set_page_config(page_title="textgen-eval", page_icon=PAGE_ICON, layout="wide")
    pages = [st.Page(page_path(name), title=title, icon=icon, default=index == 0)
             for index, (name, title, icon) in enumerate(PAGES)]
    current = st.navigation(pages)
    render_sidebar()
    if database_ready():
        with data.store().session():  # the database file is opened once for the page's reads, closed after
            current.run()


if __name__ == "__main__":
    main()
