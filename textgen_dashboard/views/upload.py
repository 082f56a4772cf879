"""Upload page: read a file, map its columns, save it as a named dataset."""

from textgen_dashboard.upload import render

if __name__ == "__main__":  # not in a spawned worker (see views/__init__.py)
    render()
