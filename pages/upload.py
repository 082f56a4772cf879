"""Upload page: read a file, map its columns, save it as a named dataset."""

from ui.upload import render

render()
