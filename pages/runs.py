"""Runs page: history, resume, delete and export."""

from ui.runs import render

render()
