"""Results: statistics per model and score, distributions, and rows to open in Explore."""

from textgen_dashboard.results import render

if __name__ == "__main__":  # not in a spawned worker (see views/__init__.py)
    render()
