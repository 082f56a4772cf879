"""History page: a dataset's runs over time, the changes flagged, and its leaderboard."""

from textgen_dashboard.history import render

if __name__ == "__main__":  # not in a spawned worker (see views/__init__.py)
    render()
