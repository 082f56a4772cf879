"""`streamlit run app.py` from a checkout: serves textgen_dashboard/app.py, as `textgen-eval dashboard` does."""

from textgen_dashboard.app import main

if __name__ == "__main__":  # Streamlit runs this file as __main__; a spawned worker process imports it as __mp_main__
    main()
