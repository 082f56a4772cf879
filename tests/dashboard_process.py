"""Start a dashboard command as a real process, check it serves on 127.0.0.1, stop it with Ctrl-C."""

from __future__ import annotations

import atexit
import ctypes
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator, Mapping

from local_servers import free_port, wait_healthy


def serve_check_and_stop(argv: list[str], cwd: Path, env: dict[str, str], timeout: float = 60) -> str:
    """Run ``argv --port N``; once /_stcore/health and / answer 200, send SIGINT (what Ctrl-C sends) to its
    process group and return its output. Fails when it exits early, never answers, or prints a traceback."""
    port = free_port()
    process = subprocess.Popen([*argv, "--port", str(port)], cwd=cwd, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        try:
            wait_healthy(f"http://127.0.0.1:{port}", process, timeout)
        except RuntimeError as exc:  # it exited: show what it printed
            raise AssertionError(f"{exc}\n{process.stdout.read()}") from None
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as reply:
            assert reply.status == 200
        os.killpg(process.pid, signal.SIGINT)
        output, _ = process.communicate(timeout=20)  # Ctrl-C stops it
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert "Traceback" not in output, output
    return output


def _start(env: Mapping[str, str], log: IO[str], *, die_with_parent: bool = False) -> tuple[subprocess.Popen, str]:
    """`streamlit run app.py` of this checkout on a free 127.0.0.1 port, answering health checks: (process, URL)."""
    root = Path(__file__).resolve().parents[1]
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port",
         str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none"],
        cwd=root, env=dict(env), stdout=log, stderr=subprocess.STDOUT,
        preexec_fn=_die_with_parent if die_with_parent else None)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process)
    except BaseException:
        _stop(process)
        raise
    return process, url


def _stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


_LIBC = ctypes.CDLL(None, use_errno=True)  # looked up here: the child between fork and exec only calls it


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the test process ends, however it ends (a worker killed by a
    timeout runs no atexit hook), so no server outlives the tests."""
    _LIBC.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


@contextmanager
def streamlit_app(tmp_path: Path, env: Mapping[str, str]) -> Iterator[str]:
    """`streamlit run app.py` of this checkout on a free 127.0.0.1 port with ``env``; yields its URL, stops it after.
    Its output goes to tmp_path/streamlit.log. For a test whose point needs a server of its own: a fresh one, or
    one with its own environment; else :func:`shared_app`."""
    with (tmp_path / "streamlit.log").open("w") as log:
        process, url = _start(env, log)
        try:
            yield url
        finally:
            _stop(process)


class _Shared:
    """The test process's one dashboard server, over whichever database file its link points at."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="textgen-shared-dashboard-"))
        self.link = self.folder / "current.duckdb"
        self.log = (self.folder / "streamlit.log").open("w")
        self.process: subprocess.Popen | None = None
        self.url = ""

    def serve(self, db: Path) -> str:
        """Point the server at ``db`` (one atomic rename of a symlink) and return its URL, started if need be."""
        staged = self.folder / "next.duckdb"
        staged.unlink(missing_ok=True)
        staged.symlink_to(Path(db).resolve())
        os.replace(staged, self.link)
        if self.process is None or self.process.poll() is not None:
            # no judge setting or key of this machine, and no database but the link
            env = {k: v for k, v in os.environ.items() if "API_KEY" not in k
                   and not k.startswith("TEXTGEN_EVAL_JUDGE_") and k != "TEXTGEN_EVAL_DB"}
            env["TEXTGEN_EVAL_DB"] = str(self.link)
            self.process, self.url = _start(env, self.log, die_with_parent=True)
        return self.url

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            _stop(self.process)
        self.log.close()
        shutil.rmtree(self.folder, ignore_errors=True)  # the link and the server's log: nothing left in /tmp


_shared: _Shared | None = None


@contextmanager
def shared_app(db: Path) -> Iterator[str]:
    """The dashboard serving ``db``: one `streamlit run app.py` per test process, started on first use and stopped
    when the process exits, pointed at each test's own database file in turn; yields its URL.

    A server costs ~1.6 CPU-s to start and 2-4 more to import the pages on their first visit (~5 CPU-s and as many
    seconds a browser test); served by one process, the tests of a worker pay that once. A test stays on its own:
    its database file is its own, and its browser context opens new Streamlit sessions (no session state kept). The
    server's environment holds no API key, judge setting or database of this machine: a test that needs either,
    or a server that has never run the app, starts its own with :func:`streamlit_app`. The dashboard resolves the
    link on every read (``textgen_dashboard.data.db_path``), so its caches, keyed on the real file, never mix two
    tests' databases."""
    global _shared
    if _shared is None:
        _shared = _Shared()
        atexit.register(_shared.close)
    yield _shared.serve(db)
