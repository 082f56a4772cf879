"""Runs page: history, resume, delete and export."""

from textgen_dashboard.runs import render

if __name__ == "__main__":  # not in a spawned worker (see views/__init__.py)
    render()
