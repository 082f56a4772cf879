"""Large uploads: preview the first rows and save through the streaming path, never reading the file whole.

Streamlit already holds the upload's bytes; reading them whole into pandas (preview,
mapping check, save) took 3.2 GB for a 172 MB CSV. A large CSV/TSV/Parquet upload is
instead written once to a temporary file (the bytes are not copied in memory) and
read from there in chunks by ``textgen_core.streaming`` with the CLI's rules: the
same messages naming file, row and column, and nothing stored when a row is bad.
"""

from __future__ import annotations

import atexit
import hashlib
import io
import shutil
import tempfile
import threading
import time
from contextlib import suppress
from pathlib import Path

import pandas as pd

from textgen_core.datasets import EXTENSIONS, ColumnMapping
from textgen_core.datasets.formats import RawTable
from textgen_core.datasets.loader import check_mapping
from textgen_core.errors import InputError, StoreError
from textgen_core.store import Store
from textgen_core.streaming import NotStreamable, StreamedRun, stream_file
from textgen_core.streaming.read import STREAMED_FORMATS, ChunkReader

#: Above either of these an upload is saved in chunks rather than read whole.
LARGE_ROWS = 50_000
LARGE_BYTES = 20 * 2**20
PREVIEW_ROWS = 50

#: A temporary copy of an upload not used for this long is removed (another session may still read a newer one).
SPILL_KEEP_S = 3600.0

_folder: Path | None = None
_spill_lock = threading.Lock()


def is_large(file_name: str, payload: bytes) -> bool:
    """True for a CSV/TSV/Parquet upload over LARGE_BYTES or LARGE_ROWS (lines counted on the bytes, no copy)."""
    fmt = EXTENSIONS.get(Path(file_name).suffix.lower())
    if fmt not in STREAMED_FORMATS:
        return False
    if len(payload) > LARGE_BYTES:
        return True
    if fmt == "parquet":
        import pyarrow.parquet as pq

        try:
            return pq.ParquetFile(io.BytesIO(payload)).metadata.num_rows > LARGE_ROWS
        except Exception:  # noqa: BLE001 - unreadable: the whole-file reader names the problem
            return False
    return payload.count(b"\n") > LARGE_ROWS


def spill(file_name: str, payload: bytes) -> Path:
    """The upload as a temporary file: one per content, written once (through a file of its own, so two sessions
    uploading at once never share a half-written file), removed when unused for SPILL_KEEP_S or at exit."""
    global _folder
    with _spill_lock:
        if _folder is None:
            _folder = Path(tempfile.mkdtemp(prefix="textgen-upload-"))
            atexit.register(shutil.rmtree, _folder, True)
        folder = _folder
    path = folder / f"{hashlib.sha1(payload).hexdigest()}{Path(file_name).suffix.lower()}"
    if path.exists():
        path.touch()  # in use again: kept for another SPILL_KEEP_S
    else:
        handle, partial = tempfile.mkstemp(dir=folder, suffix=".part")
        with open(handle, "wb") as out:
            out.write(payload)
        Path(partial).replace(path)
    stale = time.time() - SPILL_KEEP_S
    for older in folder.iterdir():
        with suppress(OSError):  # another session may remove it first
            if older != path and older.stat().st_mtime < stale:
                older.unlink()
    return path


def preview(file_name: str, payload: bytes) -> pd.DataFrame | None:
    """The first PREVIEW_ROWS rows as text cells indexed by file row number; None when the file must be read
    whole (UTF-16, unnamed columns: the whole-file reader handles them). Raises InputError naming the row."""
    try:
        reader = ChunkReader(spill(file_name, payload), file_name)
    except NotStreamable:
        return None
    chunks = reader.chunks(PREVIEW_ROWS)
    try:
        first = next(chunks)
    finally:
        chunks.close()
    return pd.DataFrame(first.rows, columns=first.columns, index=first.row_numbers, dtype=object)


def mapping_problem(file_name: str, columns: list[str], mapping: ColumnMapping) -> str | None:
    """What the header alone says is wrong with the mapping (the rows are checked while saving), or None."""
    try:
        check_mapping(RawTable(columns=columns, rows=[], row_numbers=[], label=file_name), mapping)
    except InputError as exc:
        return exc.describe()
    return None


def save(store: Store, file_name: str, payload: bytes, mapping: ColumnMapping, name: str,
         replace: bool = False) -> StreamedRun:
    """Store the upload in chunks as the next version of ``name`` (with ``replace``: in place of the dataset of that
    name); on any bad row nothing is stored (and nothing replaced)."""
    existing = name in set(store.list_datasets()["name"])
    saved = stream_file(store, spill(file_name, payload), mapping=mapping, name=name, file_name=file_name,
                        workers=1)  # under a name already stored: the next version ('name (2)'), or the same content
    if not replace or not existing or saved.reused:  # identical rows to a stored dataset: kept as it is
        return saved
    old = store.dataset_id(name)
    try:
        store.delete_dataset(old)  # refused while one of its runs is scoring
    except StoreError:
        store.delete_dataset(saved.dataset_id, force=True)
        raise
    store.rename_dataset(saved.dataset_id, name)
    saved.dataset_name = name
    return saved
