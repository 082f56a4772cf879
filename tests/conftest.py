"""Shared fixtures. Fixture plugins of each area are listed in `pytest_plugins`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "tests"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

pytest_plugins: list[str] = []


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """A fresh DuckDB file for one test."""
    return tmp_path / "textgen.duckdb"
pytest_plugins.append("judge_fixtures")  # judge_server, judge_settings, fast_retry
pytest_plugins.append("app_helpers")  # app_db, sample_run (dashboard AppTests)
