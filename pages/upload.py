"""Upload page: read a file, map its columns, save it as a named dataset."""

from textgen_dashboard.shell import within_navigation
from textgen_dashboard.upload import render

within_navigation(__file__)
render()
