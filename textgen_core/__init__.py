"""textgen-eval core library: datasets, metrics, the DuckDB store, the judge and comparisons.

This package never imports streamlit: the CLI, the dashboard and the tests use it alike.
"""

__version__ = "0.1.0"
