"""Evaluate page: choose a dataset, models, metrics and judge; estimate; run."""

from textgen_dashboard.evaluate import render
from textgen_dashboard.shell import within_navigation

within_navigation(__file__)
render()
