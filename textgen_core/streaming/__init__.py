"""Scoring files larger than memory: chunked reading, storing and scoring with bounded memory, and resuming."""

from .read import NotStreamable
from .run import CHUNK_ROWS, StreamedRun, resume_stream, stream_file, streamable_metrics

__all__ = ["CHUNK_ROWS", "NotStreamable", "StreamedRun", "resume_stream", "stream_file", "streamable_metrics"]
