"""Runs page: history, resume, delete and export."""

from textgen_dashboard.runs import render

render()
