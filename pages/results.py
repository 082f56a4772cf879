"""Results: statistics per model and score, distributions, and rows to open in Explore."""

from ui.results import render

render()
