"""textgen_core.small_file: a settings file is a regular file of bounded size, or one error naming it."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from textgen_core.errors import ParameterError
from textgen_core.small_file import read_small_file


def test_a_regular_file_within_the_limit_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "a.toml"
    path.write_bytes(b"x" * 100)
    assert read_small_file(path, "panel file", limit=100) == b"x" * 100


@pytest.mark.parametrize("kind", ["fifo", "device", "directory", "missing", "large"])
def test_anything_else_is_refused_at_once_naming_the_file(tmp_path: Path, kind: str) -> None:
    path = {"fifo": tmp_path / "f", "device": Path("/dev/zero"), "directory": tmp_path, "missing": tmp_path / "none",
            "large": tmp_path / "big"}[kind]
    if kind == "fifo":
        os.mkfifo(path)
    if kind == "large":
        path.write_bytes(b"x" * 101)
    words = {"fifo": "is a pipe (FIFO)", "device": "is a device", "directory": "is a directory",
             "missing": "no such file", "large": "101 bytes is larger than the 100 bytes"}[kind]
    outcome: list[str] = []

    def read() -> None:
        try:
            read_small_file(path, "rubric file", limit=100)
        except ParameterError as exc:
            outcome.append(str(exc))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(20)
    assert outcome and outcome[0].startswith(f"rubric file {path}: ") and words in outcome[0], outcome
