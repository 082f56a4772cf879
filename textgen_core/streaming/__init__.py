"""Scoring files larger than memory: chunked reading, storing and scoring with bounded memory."""

from .read import NotStreamable
from .run import CHUNK_ROWS, StreamedRun, stream_file, streamable_metrics

__all__ = ["CHUNK_ROWS", "NotStreamable", "StreamedRun", "stream_file", "streamable_metrics"]
