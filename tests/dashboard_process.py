"""Start a dashboard command as a real process, check it serves on 127.0.0.1, stop it with Ctrl-C."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve_check_and_stop(argv: list[str], cwd: Path, env: dict[str, str], timeout: float = 60) -> str:
    """Run ``argv --port N``; once /_stcore/health and / answer 200, send SIGINT (what Ctrl-C sends) to its
    process group and return its output. Fails when it exits early, never answers, or prints a traceback."""
    port = free_port()
    process = subprocess.Popen([*argv, "--port", str(port)], cwd=cwd, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + timeout
        while True:
            assert process.poll() is None, process.stdout.read()
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                assert time.monotonic() < deadline, f"the dashboard did not answer within {timeout:g} s"
                time.sleep(0.5)
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
