"""How the Ray engine finds and reads a dataset: one file or a folder, on any filesystem pyarrow reads."""

from __future__ import annotations

import json
from pathlib import PurePosixPath
from typing import Any, Sequence

import pyarrow as pa

from ..datasets.formats import check_header
from ..errors import InputError

_FORMATS = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl",
            ".parquet": "parquet", ".pq": "parquet"}


def files_of(source: str) -> tuple[Any, list[str]]:
    """(pyarrow filesystem, data files) for a file or a folder at a local path or URI."""
    from pyarrow import fs

    filesystem, path = fs.FileSystem.from_uri(source) if "://" in source else (fs.LocalFileSystem(), source)
    info = filesystem.get_file_info(path)
    if info.type == fs.FileType.NotFound:
        raise InputError("no such file or folder", file=source)
    if info.type == fs.FileType.File:
        return filesystem, [path]
    found = sorted(i.path for i in filesystem.get_file_info(fs.FileSelector(path, recursive=True))
                   if i.type == fs.FileType.File and PurePosixPath(i.path).suffix.lower() in _FORMATS)
    if not found:
        raise InputError(f"the folder holds no {', '.join(_FORMATS)} files", file=source)
    return filesystem, found


def content_of(filesystem: Any, files: Sequence[str]) -> dict[str, str]:
    """SHA-256 of each data file (read through ``filesystem``, so remote files too): what a resume compares."""
    import hashlib

    digests = {}
    for path in files:
        digest = hashlib.sha256()
        with filesystem.open_input_stream(path) as stream:
            while block := stream.read(1 << 20):
                digest.update(block)
        digests[path] = digest.hexdigest()
    return digests


def format_of(files: Sequence[str], source: str) -> str:
    kinds = {_FORMATS.get(PurePosixPath(f).suffix.lower()) for f in files}
    if None in kinds or len(kinds) != 1:
        raise InputError(f"the Ray engine reads one format at a time from {', '.join(_FORMATS)} files", file=source)
    return kinds.pop()


def header_of(filesystem: Any, path: str, fmt: str) -> list[str]:
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    if fmt == "parquet":
        return [str(n) for n in pq.ParquetFile(filesystem.open_input_file(path)).schema_arrow.names]
    if fmt == "jsonl":
        head = b""
        with filesystem.open_input_stream(path) as stream:
            while b"\n" not in head.lstrip():
                piece = stream.read(1 << 16)
                if not piece:
                    break
                head += piece
        first = head.decode("utf-8-sig", errors="replace").lstrip().split("\n", 1)[0]
        return [str(key) for key in json.loads(first)]
    with filesystem.open_input_stream(path) as stream:
        reader = pcsv.open_csv(stream, parse_options=pcsv.ParseOptions(delimiter="\t" if fmt == "tsv" else ","))
        return [str(n) for n in reader.schema.names]


def row_estimate(filesystem: Any, files: Sequence[str], fmt: str) -> int:
    """Rows in the files: exact for Parquet, from the line length of the first MiB otherwise."""
    import pyarrow.parquet as pq

    if fmt == "parquet":
        return sum(pq.ParquetFile(filesystem.open_input_file(f)).metadata.num_rows for f in files)
    with filesystem.open_input_stream(files[0]) as stream:
        sample = stream.read(1 << 20)
    per_row = len(sample) / max(1, sample.count(b"\n"))
    return round(sum(filesystem.get_file_info(f).size for f in files) / per_row)


def read_blocks(filesystem: Any, files: list[str], fmt: str, columns: list[str], blocks: int) -> Any:
    """The files as a Ray dataset of ``blocks`` blocks: the same blocks on every run over the same files."""
    import pyarrow.csv as pcsv

    import ray

    if fmt == "parquet":
        return _read_parquet(ray, files, filesystem, blocks)
    if fmt == "jsonl":
        # one row per line, parsed on the workers with json.loads: every value keeps its JSON type
        return ray.data.read_text(files, filesystem=filesystem, file_extensions=None, override_num_blocks=blocks)
    return ray.data.read_csv(
        files, filesystem=filesystem, file_extensions=None, override_num_blocks=blocks,
        parse_options=pcsv.ParseOptions(delimiter="\t" if fmt == "tsv" else ",", newlines_in_values=True),
        convert_options=pcsv.ConvertOptions(column_types={c: pa.string() for c in columns},
                                            strings_can_be_null=False, quoted_strings_can_be_null=False))


def _read_parquet(ray: Any, files: list[str], filesystem: Any, blocks: int) -> Any:
    """Parquet files through Ray Data's first Parquet reader, which cuts them into ``blocks`` blocks as the other
    formats are cut. The newer one (Ray 2.5x's default) starts a pool of 32 footer-reading actors, each its own
    worker process, for every read: on a 2-CPU machine a folder of two small files took 10 to 20 s to read
    instead of under 2, and came back as one block whatever ``blocks`` asked for."""
    context = ray.data.DataContext.get_current()
    newer = getattr(context, "use_datasource_v2", None)
    if newer is None:  # a Ray without the newer reader
        return ray.data.read_parquet(files, filesystem=filesystem, override_num_blocks=blocks)
    context.use_datasource_v2 = False
    try:
        return ray.data.read_parquet(files, filesystem=filesystem, override_num_blocks=blocks)
    finally:
        context.use_datasource_v2 = newer


def json_lines(lines: Sequence[str], header: Sequence[str], label: str) -> tuple[list[str], list[list[Any]]]:
    """JSON Lines as columns (the first line's keys, then new keys as they appear) and rows."""
    objects = []
    for line in lines:
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"a line is not valid JSON: {exc.msg} (character {exc.colno}): {line[:80]!r}",
                             file=label) from None
        if not isinstance(value, dict):
            raise InputError(f"each line must be one JSON object; found {line[:80]!r}", file=label)
        objects.append(value)
    columns = dict.fromkeys(header)
    for obj in objects:
        columns.update(dict.fromkeys(str(k) for k in obj))
    names = list(columns)
    return check_header(names, label), [[obj.get(c) for c in names] for obj in objects]
