"""Evaluate page: choose a dataset, models, metrics and judge; estimate; run."""

from ui.shell import within_navigation
from ui.evaluate import render

within_navigation(__file__)
render()
