"""Label: people label cells of a run on a score's scale; the judge against people below."""

from textgen_dashboard.labeling import render

if __name__ == "__main__":  # not in a spawned worker (see views/__init__.py)
    render()
