"""For tests that start a real local server: a free loopback port and Streamlit's health check."""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.request


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def streamlit_healthy(url: str) -> bool:
    """One probe of a Streamlit server's health endpoint at ``url`` (http://127.0.0.1:PORT)."""
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as reply:
            return reply.status == 200
    except OSError:
        return False


def wait_healthy(url: str, server: subprocess.Popen, timeout: float = 30) -> None:
    """Until the Streamlit server at ``url`` answers; RuntimeError when its process exits first, TimeoutError after
    ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not streamlit_healthy(url):
        if server.poll() is not None:
            raise RuntimeError(f"streamlit exited with {server.returncode} before answering at {url}")
        if time.monotonic() >= deadline:
            raise TimeoutError(f"streamlit did not answer at {url} within {timeout:g} s")
        time.sleep(0.05)  # a probe costs little; a server that answers is used at once
