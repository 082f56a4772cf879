"""Results: statistics per model and score, distributions, and rows to open in Explore."""

from textgen_dashboard.results import render

render()
