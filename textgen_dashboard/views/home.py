"""Home page: where the database lives, what it holds, and a one-click sample evaluation."""

from textgen_dashboard.home import render

render()
