"""Evaluate page: choose a dataset, models, metrics and judge; estimate; run."""

from ui.evaluate import render
from ui.shell import within_navigation

within_navigation(__file__)
render()
