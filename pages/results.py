"""Results: statistics per model and score, distributions, and rows to open in Explore."""

from textgen_dashboard.results import render
from textgen_dashboard.shell import within_navigation

within_navigation(__file__)
render()
