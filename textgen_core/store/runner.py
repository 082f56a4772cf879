"""Which program scores a run: 'host:PID', recorded when a run starts or is resumed.

A run stays 'running' in the file when its program is killed (SIGKILL, a power
cut), so the status alone cannot tell a live run from an abandoned one. The
recorded runner can, on the same machine: a resume is refused only while that
process is alive, so two programs never score one run at once, and a run whose
program died is resumed without ceremony.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path


def this_runner() -> str:
    """'host:PID' of this process."""
    return f"{socket.gethostname()}:{os.getpid()}"


def live_runner(runner: str | None, *, this_process: bool = False) -> str | None:
    """A description of ``runner`` when it is another live process on this machine, else None.

    A runner on another machine cannot be checked from here and is not reported; this process
    is reported only with ``this_process`` (a resume in this process knows whether its own
    threads still work on the run; a delete does not).
    """
    host, _, pid_text = (runner or "").rpartition(":")
    if host != socket.gethostname() or not pid_text.isdigit():
        return None
    pid = int(pid_text)
    if pid == os.getpid():
        return f"this program (PID {pid})" if this_process else None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass  # alive, owned by another user
    try:
        program = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        program = ""
    return f"PID {pid}" + (f" ({program[:120]})" if program else "")
