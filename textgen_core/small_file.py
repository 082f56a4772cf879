"""Reading a small settings file (a rubric, a panel) safely: a regular file of bounded size, or one clear error.

A path typed by a user can name a directory, a FIFO that no one writes (a read would hang), a device such as
/dev/zero (a read would fill memory) or a file far larger than any settings file: each is refused before
anything is read, naming the file and what it is.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .errors import ParameterError

#: The largest settings file read: a rubric or a panel is a few kilobytes.
MAX_FILE_BYTES = 1 << 20


def read_small_file(path: str | Path, what: str, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; anything else (missing, a directory, a FIFO,
    a device such as /dev/zero, a larger file) is one ParameterError naming the file, raised before a read
    could hang or fill memory."""
    label = str(path)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise ParameterError(f"{what} {label}: no such file") from None
    except OSError as exc:
        raise ParameterError(f"{what} {label}: cannot be read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(info.st_mode):
        kind = ("a directory" if stat.S_ISDIR(info.st_mode) else "a pipe (FIFO)" if stat.S_ISFIFO(info.st_mode)
                else "a device" if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode) else "not a regular file")
        raise ParameterError(f"{what} {label}: is {kind}, not a regular file")
    if info.st_size > limit:
        raise ParameterError(f"{what} {label}: {info.st_size:,} bytes is larger than the {limit:,} bytes such a "
                             "file may have")
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise ParameterError(f"{what} {label}: cannot be read ({exc.strerror or exc})") from None
    if len(data) > limit:  # grew since it was measured
        raise ParameterError(f"{what} {label}: larger than the {limit:,} bytes such a file may have")
    return data
