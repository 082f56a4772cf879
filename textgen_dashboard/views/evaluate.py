"""Evaluate page: choose a dataset, models, metrics and judge; estimate; run."""

from textgen_dashboard.evaluate import render

if __name__ == "__main__":  # not in a spawned worker (see views/__init__.py)
    render()
