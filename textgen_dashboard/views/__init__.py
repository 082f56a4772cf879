"""Page scripts: st.navigation (textgen_dashboard/app.py) runs each file; each only calls its render module."""
