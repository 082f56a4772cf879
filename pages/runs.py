"""Runs page: history, resume, delete and export."""

from textgen_dashboard.runs import render
from textgen_dashboard.shell import within_navigation

within_navigation(__file__)
render()
