"""Upload page: read a file, map its columns, save it as a named dataset."""

from ui.shell import within_navigation
from ui.upload import render

within_navigation(__file__)
render()
