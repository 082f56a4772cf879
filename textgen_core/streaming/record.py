"""What a streamed run remembers to be resumed: its file (and how to tell it has not changed) and its settings.

The record is kept with the Ray engine's block runs (``block_runs``: source,
settings, rows per chunk); the chunks a run stored are its finished blocks. A
resumed run reads the file again in chunks of the same size, so chunk ``n``
holds the same rows; the file's content (its SHA-256, hashed whole) must be as
it was, or the resume is refused. The content decides, not the modification
time: a file touched or rewritten identically resumes, an edit whose time was
put back (``cp -p``, ``rsync -t``) is refused. Runs recorded before the content
hash was kept are checked by size, modification time and first and last bytes.
A file that changes while it is read (it grows, or is rewritten) is refused at
the end of the read: :func:`check_still` compares it with its state at the start.
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
    """Size and modification time (taken first), SHA-256 of the whole file and of its first and last 64 KiB."""
    stat = path.stat()
    with open(path, "rb") as binary:
        head = hashlib.sha256(binary.read(_ENDS)).hexdigest()
        binary.seek(max(0, stat.st_size - _ENDS))
        tail = hashlib.sha256(binary.read(_ENDS)).hexdigest()
        binary.seek(0)
        whole = hashlib.file_digest(binary, "sha256").hexdigest()
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "head": head, "tail": tail, "sha256": whole}


def file_state(path: Path) -> dict[str, Any]:
    """Size and modification time of a file, before it is read (for :func:`check_still`)."""
    stat = path.stat()
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def check_still(path: Path, label: str, start: dict[str, Any]) -> None:
    """Refuse a file that changed while it was read (grown, cut or rewritten since ``start`` was taken)."""
    try:
        stat = path.stat()
    except OSError:
        raise InputError("the file was removed while it was read; nothing was stored", file=label) from None
    if (stat.st_size, stat.st_mtime_ns) != (start["size"], start["mtime_ns"]):
        grew = f" (it grew by {stat.st_size - start['size']} bytes)" if stat.st_size > start["size"] else ""
        raise InputError(f"the file changed while it was read{grew}: its last rows may be cut or missing, so "
                         "nothing was stored. Score it again once it is complete", file=label)


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
        store.streams.record_block_run(run_id, str(self.path), {"mapping": self.mapping, "stream": {
            "label": self.label, "file": self.file, "models": self.models, "required": self.required,
            "earlier": self.earlier}}, self.chunk_rows)

    def check_unchanged(self, run_id: int) -> dict[str, Any]:
        """Refuse, naming what differs, when the file is gone or not the one the run read; else its fingerprint
        now (the start of the resumed read)."""
        if not self.path.is_file():
            raise InputError(f"run {run_id} reads this file to finish, and it is gone; nothing was resumed",
                             file=self.label)
        now = fingerprint(self.path)
        checks = ((("size", "size"), ("sha256", "content")) if "sha256" in self.file else
                  (("size", "size"), ("mtime_ns", "modification time"), ("head", "first bytes"), ("tail", "last bytes")))
        changed = [what for key, what in checks if now[key] != self.file[key]]
        if changed:
            raise InputError(f"the file changed since run {run_id} read it ({', '.join(changed)} differ): its "
                             "stored chunks would not match the rest of the file, so nothing was resumed. "
                             "Score the file again with 'textgen-eval run'", file=self.label)
        return now


def new_record(path: Path, label: str, mapping: dict[str, Any], models: Sequence[str] | None,
               required: Sequence[str], earlier: Sequence[str], chunk_rows: int) -> StreamRecord:
    """The record of a run about to read ``path`` (fingerprinted now)."""
    return StreamRecord(Path(os.path.abspath(path)), label, fingerprint(path), mapping, list(models or []),
                        list(required), list(earlier), chunk_rows)


def stream_record(store: Store, run_id: int) -> StreamRecord | None:
    """The record of a streamed run, or None for any other run."""
    found = store.streams.block_run(run_id)
    if found is None or not found[1] or "stream" not in found[1]:
        return None
    source, settings, chunk_rows = found
    stream = settings["stream"]
    return StreamRecord(Path(source), stream["label"], stream["file"], settings["mapping"], stream["models"],
                        stream["required"], stream["earlier"], chunk_rows)
