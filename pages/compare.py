"""Compare: baseline against candidates per score, deltas with intervals and tests, agreement with humans."""

from ui.compare import render
from ui.shell import within_navigation

within_navigation(__file__)
render()
