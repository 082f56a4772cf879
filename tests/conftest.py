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

#: What the repository root held when the session started; the suite must add nothing there.
_ROOT_AT_START = {p.name for p in ROOT.iterdir()}
#: pytest's own cache (when the cacheprovider plugin is on) is the one allowed newcomer.
_ROOT_ALLOWED = {".pytest_cache"}


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the session when a test left a file or folder in the repository root (tests write under tmp_path)."""
    left = sorted({p.name for p in ROOT.iterdir()} - _ROOT_AT_START - _ROOT_ALLOWED)
    if left:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        message = f"tests left new files in the repository root {ROOT}: {', '.join(left)}"
        if reporter is not None:
            reporter.write_line(f"ERROR: {message}", red=True, bold=True)
        else:
            print(f"ERROR: {message}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No judge setting comes from this machine's environment."""
    for name in ("TEXTGEN_EVAL_JUDGE_BASE_URL", "TEXTGEN_EVAL_JUDGE_MODEL", "TEXTGEN_EVAL_JUDGE_API_KEY",
                 "TEXTGEN_EVAL_JUDGE_EMBEDDING_MODEL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """A fresh DuckDB file for one test."""
    return tmp_path / "textgen.duckdb"
pytest_plugins.append("judge_fixtures")  # judge_server, judge_settings, fast_retry
pytest_plugins.append("judge_metric_env")  # env: the judge metric tests' scripted judge and store
pytest_plugins.append("app_helpers")  # app_db, sample_run (dashboard AppTests)


@pytest.fixture(scope="module")
def ray_cluster() -> object:
    """A local Ray cluster of 2 CPUs for one test module (the Ray tests ask for it with usefixtures)."""
    ray = pytest.importorskip("ray", reason="the Ray engine is the optional extra textgen-eval[ray]")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()
