"""Compare: baseline against candidates per score, deltas with intervals and tests, agreement with humans."""

from textgen_dashboard.compare import render

if __name__ == "__main__":  # not in a spawned worker (see views/__init__.py)
    render()
