"""Compare: baseline against candidates per score, deltas with intervals and tests, agreement with humans."""

from ui.compare import render

render()
