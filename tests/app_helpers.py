"""Shared fixtures and helpers for the dashboard's AppTest suites.

Each test gets its own DuckDB file through $TEXTGEN_EVAL_DB; the Store and the
job registry come from ``textgen_dashboard.data`` exactly as the pages get them (Streamlit's
caches are process-wide, so AppTest and the test body share them).
"""

from __future__ import annotations

import functools
import shutil
import sys
from pathlib import Path
from typing import Any, Iterator

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

from textgen_core.datasets import SAMPLE_NAME, load_sample  # noqa: E402
from textgen_core.evaluate import evaluate  # noqa: E402
from textgen_core.store import Store  # noqa: E402
from textgen_dashboard import app_path, data  # noqa: E402
from textgen_dashboard.home import sample_metrics  # noqa: E402

#: Seconds one AppTest script run may take (first runs import pandas, duckdb, nltk...).
TIMEOUT = 60


def _scan_components_once() -> None:
    """Every new AppTest looks for Streamlit components in every installed distribution (it parses ~360 METADATA
    files: 1-2 s per AppTest on this machine, most of a dashboard test's time); a server does it once at start. The
    installed packages do not change while the tests run, so the scan's answer is kept for the process."""
    from streamlit.components.v2 import manifest_scanner

    scan = manifest_scanner.scan_component_manifests
    if not hasattr(scan, "cache_info"):  # not wrapped yet (this module may be imported twice)
        manifest_scanner.scan_component_manifests = functools.cache(scan)


_scan_components_once()


@pytest.fixture(autouse=True)
def _restore_main_module() -> Iterator[None]:
    """AppTest installs the script it ran as sys.modules['__main__'] and leaves it there; a process pool
    started later with "spawn" would re-import that page script in its workers. Put the real one back."""
    main = sys.modules["__main__"]
    yield
    sys.modules["__main__"] = main


@pytest.fixture
def app_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty database for the dashboard, with Streamlit's reader caches cleared."""
    path = tmp_path / "dashboard.duckdb"
    monkeypatch.setenv(data.DB_ENV, str(path))
    st.cache_data.clear()
    yield path
    wait_for_jobs()
    st.cache_data.clear()


@pytest.fixture(scope="session")
def _sample_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, int]:
    """The sample dataset saved and scored with lexical metrics once per test process: (file, dataset id, run id)."""
    path = tmp_path_factory.mktemp("sample_run") / "sample.duckdb"
    db = Store(path)
    dataset_id = db.save_dataset(load_sample(), SAMPLE_NAME)
    run_id = evaluate(db, dataset_id, sample_metrics(), workers=1)
    db.close()
    return path, dataset_id, run_id


@pytest.fixture
def sample_run(app_db: Path, _sample_file: tuple[Path, int, int]) -> tuple[int, int]:
    """The sample dataset saved and scored with lexical metrics: (dataset id, run id). The test's database is a
    copy of one scored once per process, so a test may write to it freely."""
    path, dataset_id, run_id = _sample_file
    shutil.copyfile(path, app_db)
    data.refresh()
    return dataset_id, run_id


def store() -> Store:
    """The store the pages use for the current $TEXTGEN_EVAL_DB."""
    return data.store()


def page(name: str) -> AppTest:
    """AppTest of the app (``"app.py"``) or of one page script alone (``"views/upload.py"``), not yet run.

    Paths are inside the textgen_dashboard package, as installed; ``at.switch_page("views/x.py")``
    then opens another page of the app's navigation.
    """
    return AppTest.from_file(str(app_path().parent / name), default_timeout=TIMEOUT)


def app_page(view: str) -> AppTest:
    """The app run once, then switched through its navigation to ``views/<view>.py`` and run: a page as users reach it."""
    return page("app.py").run().switch_page(f"views/{view}.py").run()


def wait_for_jobs(timeout: float = 60) -> None:
    """Block until every background job of the registry has ended."""
    registry = data.jobs()
    for job in registry.jobs():
        registry.wait(job.job_id, timeout)
        assert not job.live, f"job {job.job_id} ({job.label}) still running after {timeout} s"


def no_exception(at: AppTest) -> None:
    """The script ran without an uncaught exception (shows it when it did not)."""
    assert not at.exception, [e.value for e in at.exception]


def texts(elements: Any) -> list[str]:
    """The text of every element in an AppTest element list."""
    return [str(e.value) for e in elements]


def all_text(at: AppTest) -> str:
    """Markdown, captions, alerts and code of a run, joined, markdown escapes removed."""
    parts: list[str] = []
    for kind in ("markdown", "caption", "info", "success", "warning", "error", "code", "title", "subheader"):
        parts += texts(getattr(at, kind))
    return "\n".join(parts).replace("\\", "")


def frame_with(at: AppTest, column: str, index: int = 0) -> pd.DataFrame:
    """The ``index``-th dataframe shown (-1: the last) whose columns include ``column``."""
    frames = [e.value for e in at.dataframe if column in e.value.columns]
    assert frames, f"no dataframe with a {column!r} column"
    return frames[index]


def no_raw_html(at: AppTest) -> None:
    """No element of the run renders HTML (st.html, or markdown with unsafe_allow_html)."""
    assert not at.get("html"), "st.html used"
    stack: list[Any] = [at._tree]
    while stack:
        node = stack.pop()
        stack.extend(getattr(node, "children", {}).values())
        proto = getattr(node, "proto", None)
        assert not getattr(proto, "allow_html", False), f"{node.type} allows HTML: {getattr(node, 'value', '')!r}"


def summary_scores(run_id: int) -> list[str]:
    """The scored names of a run, in the order its summary (and so the Compare page) lists them."""
    from textgen_core.summary import run_summary

    summary = run_summary(store(), run_id)
    return list(dict.fromkeys(summary.loc[summary["n_scored"] > 0, "score"]))
