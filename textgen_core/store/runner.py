"""Which program scores a run: 'host:PID:START', recorded when a run starts or is resumed.

A run stays 'running' in the file when its program is killed (SIGKILL, a power
cut), so the status alone cannot tell a live run from an abandoned one. The
recorded runner can, on the same machine: a resume is refused only while that
process is alive, so two programs never score one run at once, and a run whose
program died is resumed without ceremony. A PID alone is not enough: the system
gives a dead program's PID to a later one, so the runner also records when its
process started (clock ticks since boot, from /proc), and a live process with
that PID but another start time is not the runner. Runners recorded as
'host:PID' (before start times were kept) are judged by the PID alone.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path


def _started(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot), or None where /proc does not tell."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]  # field 22, counted after the program name


def this_runner() -> str:
    """'host:PID:START' of this process ('host:PID' where the start time is unknown)."""
    started = _started(os.getpid())
    return f"{socket.gethostname()}:{os.getpid()}" + (f":{started}" if started else "")


def live_runner(runner: str | None, *, this_process: bool = False) -> str | None:
    """A description of ``runner`` when it is another live process on this machine, else None.

    A runner on another machine cannot be checked from here and is not reported; this process
    is reported only with ``this_process`` (a resume in this process knows whether its own
    threads still work on the run; a delete does not).
    """
    host, pid_text, started = _parts(runner or "")
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
    now = _started(pid)
    if started and now and now != started:
        return None  # the PID now belongs to a later program: the runner is gone
    try:
        program = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        program = ""
    return f"PID {pid}" + (f" ({program[:120]})" if program else "")


def _parts(runner: str) -> tuple[str, str, str]:
    """(host, PID, start time or '') of 'host:PID:START' or 'host:PID' (a host name may hold colons)."""
    head, _, last = runner.rpartition(":")
    before, _, middle = head.rpartition(":")
    if before and middle.isdigit() and last.isdigit() and before == socket.gethostname():
        return before, middle, last
    return head, last, ""
