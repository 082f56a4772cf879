"""Evaluate page: choose a dataset, models, metrics and judge; estimate; run."""

from ui.evaluate import render

render()
