"""Page scripts: st.navigation (textgen_dashboard/app.py) runs each file; each only calls its render module.

Each call sits under ``if __name__ == "__main__"``: Streamlit runs a page as ``__main__``, while a
process pool started with "spawn" (the runner's) re-imports the main script as ``__mp_main__``
in every worker, which must not render a page or open the database.
"""
