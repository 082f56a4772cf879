"""Runs page: history, resume, delete and export."""

from ui.runs import render
from ui.shell import within_navigation

within_navigation(__file__)
render()
