"""Judge criteria page: custom judge metrics written, tried on five rows and saved."""

from textgen_dashboard.criteria import render

if __name__ == "__main__":  # not in a spawned worker (see views/__init__.py)
    render()
