"""Start a dashboard command as a real process, check it serves on 127.0.0.1, stop it with Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Mapping

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


@contextmanager
def streamlit_app(tmp_path: Path, env: Mapping[str, str]) -> Iterator[str]:
    """`streamlit run app.py` of this checkout on a free 127.0.0.1 port with ``env``; yields its URL, stops it after.
    Its output goes to tmp_path/streamlit.log."""
    root = Path(__file__).resolve().parents[1]
    port = free_port()
    with (tmp_path / "streamlit.log").open("w") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true", "--server.port",
             str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
             "--server.fileWatcherType", "none"],
            cwd=root, env=dict(env), stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        try:
            wait_healthy(url, process)
            yield url
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
