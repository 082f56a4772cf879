"""Compare: baseline against candidates per score, deltas with intervals and tests, agreement with humans."""

from ui.shell import within_navigation
from ui.compare import render

within_navigation(__file__)
render()
