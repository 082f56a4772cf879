"""Every page that reads runs says how to make one on an empty database, reached through the app or opened alone."""

from __future__ import annotations

import pytest

from app_helpers import all_text, app_page, no_exception, page

RUN_PAGES = ("compare", "explore", "label", "results", "runs")


@pytest.mark.parametrize("view", RUN_PAGES)
def test_an_empty_database_says_there_are_no_runs(app_db, view):
    for at in (app_page(view), page(f"views/{view}.py").run()):
        no_exception(at)
        assert "No runs yet" in all_text(at)
