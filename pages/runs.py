"""Runs page: history, resume, delete and export."""

from ui.shell import within_navigation
from ui.runs import render

within_navigation(__file__)
render()
