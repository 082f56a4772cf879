"""Compare: baseline against candidates per score, deltas with intervals and tests, agreement with humans."""

from textgen_dashboard.compare import render

render()
