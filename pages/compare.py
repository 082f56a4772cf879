"""Compare: baseline against candidates per score, deltas with intervals and tests, agreement with humans."""

from textgen_dashboard.compare import render
from textgen_dashboard.shell import within_navigation

within_navigation(__file__)
render()
