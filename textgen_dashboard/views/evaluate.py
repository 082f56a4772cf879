"""Evaluate page: choose a dataset, models, metrics and judge; estimate; run."""

from textgen_dashboard.evaluate import render

render()
