"""Results: statistics per model and score, distributions, and rows to open in Explore."""

from ui.shell import within_navigation
from ui.results import render

within_navigation(__file__)
render()
