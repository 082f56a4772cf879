"""Results: statistics per model and score, distributions, and rows to open in Explore."""

from ui.results import render
from ui.shell import within_navigation

within_navigation(__file__)
render()
