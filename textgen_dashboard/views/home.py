"""Home page: where the database lives, what it holds, and a one-click sample evaluation."""

from textgen_dashboard.home import render

if __name__ == "__main__":  # not in a spawned worker (see views/__init__.py)
    render()
