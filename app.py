"""`streamlit run app.py` from a checkout: serves textgen_dashboard/app.py, as `textgen-eval dashboard` does."""

from textgen_dashboard.app import main

main()
