"""The Streamlit dashboard's render modules, shared widgets and its one data module (ui.data)."""
