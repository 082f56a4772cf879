"""Upload page: read a file, map its columns, save it as a named dataset."""

from textgen_dashboard.upload import render

render()
