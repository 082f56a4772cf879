"""Shared fixtures. Fixture plugins of each area are listed in `pytest_plugins`."""

from __future__ import annotations

import os

# Two xdist workers share two cores: one BLAS/OpenMP thread each (torch, numpy's OpenBLAS, and the processes the
# tests start inherit it). With two threads a worker's torch waits and spins on a thread that the other worker has
# preempted: tests/metrics/test_bertscore_reference.py and tests/failures/test_planted_truth.py took 45 CPU-s with
# two threads against 33 with one (issue 33). Set before anything imports numpy or torch; a value given is kept.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import logging
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "tests"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

pytest_plugins: list[str] = []

# Tests call the dashboard's cached readers outside a Streamlit server, where each call warns "No runtime found".
# Streamlit's handler writes to the stderr it saw at import, past pytest's capture: the lines filled the end of CI's
# log, below the summary. The same logger object is the one Streamlit configures later; a filter outlives its levels.
logging.getLogger("streamlit.runtime.caching.cache_data_api").addFilter(
    lambda record: "No runtime found" not in record.getMessage())

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


#: The test files that take longest (`--durations`), longest first. They are handed to the workers first, so that
#: under `-n 2` no long file is left to run alone at the end; a name missing here only loses that head start.
SLOW_FIRST = (
    "dashboard/test_journey.py", "engines/test_ray_engine.py", "project/test_readme.py",
    "metrics/lexical/test_lexical_tokenizer.py", "dashboard/test_browser.py", "project/test_packaging.py",
    "dashboard/test_failures_section.py", "metrics/test_bertscore_local_files.py", "dashboard/test_browser_over_time.py",
    "metrics/lexical/test_lexical_rouge.py", "dashboard/test_align.py", "align/test_planted_blind_spot.py",
    "judge/test_judge_engine.py", "dashboard/test_report_button.py", "cli/test_failures_cli.py",
    "judge/test_judge_batch_run.py", "datasets/test_datasets_both_paths.py", "metrics/lexical/test_lexical_bleu.py",
    "dashboard/test_two_programs.py", "cli/test_signals.py", "metrics/test_bertscore_reference.py",
    "streaming/test_streaming_resume.py", "metrics/lexical/test_lexical_bleu_kernel.py", "runs/test_busy_database.py",
    "dashboard/test_app_label.py", "runs/test_jury_runs.py", "judge/test_custom_metrics.py",
)
#: Test files that start the Ray cluster (the ``ray_cluster`` fixture, or ``ray.init`` in the middle of a test).
#: Under `-n 2` they form one unit of work, run on one worker one after another: one cluster at a time (memory,
#: CPUs), started once. Named here because the scheduler sees test ids, not fixtures; collection checks the list.
RAY_GROUP = "ray"
RAY_FILES = ("engines/test_ray_classification.py", "engines/test_ray_engine.py", "judge/test_ray_judge_cache.py",
             "runs/test_corpus_paths.py", "runs/test_ray_hostile.py")


def _uses_ray(item: pytest.Item) -> bool:
    return "ray_cluster" in getattr(item, "fixturenames", ()) or _test_file(item) in RAY_FILES


def _test_file(item: pytest.Item) -> str:
    """The item's file relative to tests/ (its full path when it lies elsewhere)."""
    path = Path(item.path)
    return path.relative_to(ROOT / "tests").as_posix() if path.is_relative_to(ROOT / "tests") else str(path)


def _unit_of_work(nodeid: str) -> str:
    """The unit of work a test id belongs to under `-n 2`: its file, or RAY_GROUP for the Ray files."""
    name = nodeid.split("::", 1)[0].removeprefix("tests/")
    return RAY_GROUP if name in RAY_FILES else name


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """Hand out whole files (the Ray files as one unit), in collection order: each file's module fixtures are set
    up once, on one worker, and the slowest files start first.

    xdist's own `--dist loadgroup` cannot do it under pytest >= 9.2: it tags each test id with its group by
    rewriting ``item._nodeid``, which pytest 9.2 no longer reads, so every test was handed out alone and module
    fixtures (and the Ray cluster) were set up on both workers."""
    from xdist.scheduler import LoadScopeScheduling

    class FileUnits(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _unit_of_work(nodeid)

    return FileUnits(config, log)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The slowest files first (the Ray files side by side, at the rank of the first of them); a test that starts
    the Ray cluster from a file missing in RAY_FILES stops the session."""
    missing = sorted({_test_file(item) for item in items if _uses_ray(item)} - set(RAY_FILES))
    if missing:
        raise pytest.UsageError(f"tests/conftest.py: add {', '.join(missing)} to RAY_FILES (they use the Ray "
                                "cluster; the scheduler keeps those files on one worker)")
    rank = {name: i for i, name in enumerate(SLOW_FIRST)}
    ray_rank = min(rank.get(name, len(SLOW_FIRST)) for name in RAY_FILES)

    def order(item: pytest.Item) -> tuple[int, bool]:
        name = _test_file(item)
        return (ray_rank, False) if name in RAY_FILES else (rank.get(name, len(SLOW_FIRST)), True)

    items.sort(key=order)  # stable: a file keeps its order


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


@pytest.fixture(scope="session")
def _empty_store_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database file with this code's tables and no rows, made once per test process."""
    from textgen_core.store import Store

    path = tmp_path_factory.mktemp("template") / "empty.duckdb"
    store = Store(path)
    store.check()
    store.close()
    assert not path.with_name(path.name + ".wal").exists()  # the closed file holds everything
    return path


@pytest.fixture
def empty_db(tmp_path: Path, _empty_store_file: Path) -> Path:
    """A database file with the tables and no rows, for a test that needs a store, not its creation: a copy of
    one file made once per process (a new file's tables cost a DuckDB write transaction and checkpoint each)."""
    path = tmp_path / "empty.duckdb"
    shutil.copyfile(_empty_store_file, path)
    return path


@pytest.fixture
def cli_main(capsys: pytest.CaptureFixture[str],
             monkeypatch: pytest.MonkeyPatch) -> Callable[..., subprocess.CompletedProcess]:
    """The CLI in this process (`main(argv)`), its output captured, shaped like `subprocess.run`'s result.

    For tests whose point is what a command prints, stores and returns, not the process around it (a new
    interpreter costs seconds of imports); signals, kills and a second program keep their real processes.
    ``env`` entries are set for this test only; ``cwd`` becomes the working directory."""
    from textgen_core.cli.main import main

    def run(*argv: object, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
        for name, value in (env or {}).items():
            monkeypatch.setenv(name, value)
        if cwd is not None:
            monkeypatch.chdir(cwd)
        capsys.readouterr()  # what the test printed before is not the command's
        try:
            code = main([str(a) for a in argv])
        except SystemExit as stop:  # argparse's usage errors and --help end the command as the process would
            code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        out = capsys.readouterr()
        return subprocess.CompletedProcess(list(argv), code, out.out, out.err)

    return run


pytest_plugins.append("judge_fixtures")  # judge_server, judge_settings, fast_retry
pytest_plugins.append("judge_metric_env")  # env: the judge metric tests' scripted judge and store
pytest_plugins.append("app_helpers")  # app_db, sample_run (dashboard AppTests)


@pytest.fixture
def ray_cluster() -> object:
    """A local Ray cluster of 2 CPUs (the Ray tests ask for it with usefixtures). One cluster serves every Ray test
    that runs in a row, its worker processes (and their imports) reused: it starts for the first and stops after
    the last (`pytest_runtest_teardown`). What a test leaves in it are the judge's named limiters (one per endpoint
    and model, each run configures the one it uses) and objects freed with their references."""
    ray = pytest.importorskip("ray", reason="the Ray engine is the optional extra textgen-eval[ray]")
    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    return ray


@pytest.hookimpl(trylast=True)  # after the test's own fixtures are torn down
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Stop the shared Ray cluster after the last test in a row that uses it (see `ray_cluster`)."""
    ray = sys.modules.get("ray")
    if ray is None or not _uses_ray(item):
        return
    if nextitem is None or not _uses_ray(nextitem):
        if ray.is_initialized():
            ray.shutdown()
