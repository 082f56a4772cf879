"""What a streamed run remembers to be resumed: its file (and how to tell it has not changed) and its settings.

The record is kept with the Ray engine's block runs (``block_runs``: source,
settings, rows per chunk); the chunks a run stored are its finished blocks. A
resumed run reads the file again in chunks of the same size, so chunk ``n``
holds the same rows; the file's size, modification time and first and last
bytes must be as they were, or the resume is refused.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..errors import InputError
from ..store import Store

#: Bytes hashed at each end of the file.
_ENDS = 1 << 16


def fingerprint(path: Path) -> dict[str, Any]:
    """Size, modification time and SHA-256 of the first and last 64 KiB of a file."""
    stat = path.stat()
    with open(path, "rb") as binary:
        head = hashlib.sha256(binary.read(_ENDS)).hexdigest()
        binary.seek(max(0, stat.st_size - _ENDS))
        tail = hashlib.sha256(binary.read(_ENDS)).hexdigest()
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "head": head, "tail": tail}


@dataclass(frozen=True)
class StreamRecord:
    """A streamed run's file, column mapping, settings and rows per chunk."""

    path: Path
    label: str
    file: dict[str, Any]
    mapping: dict[str, Any]
    models: list[str]
    required: list[str]
    earlier: list[str]  # names of stored datasets its rows may turn out to equal
    chunk_rows: int

    def save(self, store: Store, run_id: int) -> None:
        store.record_block_run(run_id, str(self.path), {"mapping": self.mapping, "stream": {
            "label": self.label, "file": self.file, "models": self.models, "required": self.required,
            "earlier": self.earlier}}, self.chunk_rows)

    def check_unchanged(self, run_id: int) -> None:
        """Refuse, naming what differs, when the file is gone or not the one the run read."""
        if not self.path.is_file():
            raise InputError(f"run {run_id} reads this file to finish, and it is gone; nothing was resumed",
                             file=self.label)
        now = fingerprint(self.path)
        changed = [what for key, what in (("size", "size"), ("mtime_ns", "modification time"),
                                          ("head", "first bytes"), ("tail", "last bytes"))
                   if now[key] != self.file[key]]
        if changed:
            raise InputError(f"the file changed since run {run_id} read it ({', '.join(changed)} differ): its "
                             "stored chunks would not match the rest of the file, so nothing was resumed. "
                             "Score the file again with 'textgen-eval run'", file=self.label)


def new_record(path: Path, label: str, mapping: dict[str, Any], models: Sequence[str] | None,
               required: Sequence[str], earlier: Sequence[str], chunk_rows: int) -> StreamRecord:
    """The record of a run about to read ``path`` (fingerprinted now)."""
    return StreamRecord(Path(os.path.abspath(path)), label, fingerprint(path), mapping, list(models or []),
                        list(required), list(earlier), chunk_rows)


def stream_record(store: Store, run_id: int) -> StreamRecord | None:
    """The record of a streamed run, or None for any other run."""
    found = store.block_run(run_id)
    if found is None or not found[1] or "stream" not in found[1]:
        return None
    source, settings, chunk_rows = found
    stream = settings["stream"]
    return StreamRecord(Path(source), stream["label"], stream["file"], settings["mapping"], stream["models"],
                        stream["required"], stream["earlier"], chunk_rows)
