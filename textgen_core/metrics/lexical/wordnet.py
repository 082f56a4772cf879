"""WordNet 3.0 for METEOR, offline: nltk's own data if present, else Debian's wordnet-base files.

nltk reads corpora only from directories on ``nltk.data.path`` and refuses
symlinks that leave them, and Debian's files lack the ``lexnames`` index. So
the data, index and exception files are copied once into a cache directory
(with the lexnames list shipped in ``textgen_core/data/wordnet``), that
directory is put on ``nltk.data.path``, and a reader is built there that does
not try to map versions (the data is 3.0 already; mapping would load nltk's
downloadable 'wordnet' corpus). Nothing is ever downloaded.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import warnings
from contextlib import suppress
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

ENV_DIR = "TEXTGEN_EVAL_WORDNET_DIR"
DEFAULT_DIR = "/usr/share/wordnet"
NEEDED = tuple(f"{kind}.{pos}" for kind in ("data", "index") for pos in ("noun", "verb", "adj", "adv")) + tuple(
    f"{pos}.exc" for pos in ("noun", "verb", "adj", "adv")
)
MISSING = "METEOR needs WordNet 3.0 data: apt-get install wordnet-base or set TEXTGEN_EVAL_WORDNET_DIR"

_lock = threading.Lock()
_reader: Any = None
_error: str | None = None


def source_dir() -> Path:
    """Where WordNet database files are looked for (``$TEXTGEN_EVAL_WORDNET_DIR`` or Debian's place)."""
    return Path(os.environ.get(ENV_DIR) or DEFAULT_DIR)


@lru_cache(maxsize=1)
def _nltk_has_wordnet() -> bool:
    """True when nltk's own data directories hold the wordnet corpus."""
    import nltk

    for name in ("corpora/wordnet", "corpora/wordnet.zip"):
        try:
            nltk.data.find(name)
            return True
        except (LookupError, ValueError, OSError):
            continue
    return False


def problem() -> str | None:
    """Why WordNet cannot be loaded on this machine, or None. Cheap: reads no data."""
    if _reader is not None:
        return None
    if _error is not None:
        return _error
    missing = [name for name in NEEDED if not (source_dir() / name).is_file()]
    if not missing or _nltk_has_wordnet():  # the files first: asking nltk imports it (~2.5 CPU-s)
        return None
    return f"{MISSING} (no {', '.join(missing[:3])}{'...' if len(missing) > 3 else ''} in {source_dir()})"


def load() -> Any:
    """The process-wide WordNet reader, loaded on first use (about a second). Raises RuntimeError if absent."""
    global _reader, _error
    if _reader is not None:
        return _reader
    with _lock:
        if _reader is None:
            try:
                _reader = _load()
            except (OSError, LookupError, ValueError) as exc:
                _error = f"{MISSING} ({exc})"
                raise RuntimeError(_error) from exc
            if _reader is None:
                _error = MISSING
                raise RuntimeError(_error)
    return _reader


def _load() -> Any:
    if _nltk_has_wordnet():
        from nltk.corpus import wordnet

        wordnet.ensure_loaded()
        return wordnet
    source = source_dir()
    if any(not (source / name).is_file() for name in NEEDED):
        return None
    root = _install(source)
    import nltk

    if str(root) not in nltk.data.path:
        nltk.data.path.append(str(root))
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class _WordNet30(WordNetCorpusReader):
        """A reader on WordNet 3.0 files that needs no mapping to another WordNet version, and that keeps its
        lemma index (what nltk takes most of its start to parse) beside the files, read back on later starts."""

        def map_wn(self, version: str = "wordnet") -> None:  # noqa: D102 - see class docstring
            return None

        def _load_lemma_pos_offset_map(self) -> None:
            index = root / INDEX_CACHE
            stored = read_index(index)
            if stored is None:
                super()._load_lemma_pos_offset_map()
                write_index(index, self._lemma_pos_offset_map)
            else:
                self._lemma_pos_offset_map.update(stored)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "multilingual functions are not available"
        return _WordNet30(str(root), None)


#: The lemma index nltk's reader builds from the index files (lemma -> part of speech -> synset offsets), kept
#: in the cache directory as JSON with the nltk version that built it: parsing the index files is about 3 s of
#: CPU in every process that scores METEOR; reading this file back is a tenth of that.
INDEX_CACHE = "lemma_index.json"


def read_index(path: Path) -> dict[str, dict[str, list[int]]] | None:
    """The stored lemma index, or None when absent, unreadable or built by another nltk version."""
    import nltk

    try:
        with open(path, encoding="utf-8") as handle:
            stored = json.load(handle)
    except (OSError, ValueError):
        return None
    if not isinstance(stored, dict) or stored.get("nltk") != nltk.__version__:
        return None
    return stored["index"] if isinstance(stored.get("index"), dict) else None


def write_index(path: Path, index: dict[str, dict[str, list[int]]]) -> None:
    """Store the lemma index atomically (processes starting together may all write it; one file wins whole)."""
    import nltk

    try:
        handle, staging = tempfile.mkstemp(prefix=".lemma-index-", dir=path.parent)
    except OSError:  # a read-only cache: the next process parses the index files again
        return
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump({"nltk": nltk.__version__, "index": index}, out, separators=(",", ":"))
        os.replace(staging, path)
    except OSError:
        with suppress(OSError):
            os.unlink(staging)


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "textgen-eval"


def _install(source: Path) -> Path:
    """The cache directory holding a copy of ``source``'s files plus lexnames; built once, atomically."""
    stamp = "\n".join(
        f"{name}\t{(source / name).stat().st_size}\t{int((source / name).stat().st_mtime)}" for name in NEEDED
    ) + f"\nsource\t{source.resolve()}\n"
    target = cache_root() / "wordnet-3.0"
    if (target / "SOURCE").is_file() and (target / "SOURCE").read_text() == stamp:
        return target.resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix="wordnet-", dir=target.parent))
    try:
        for name in NEEDED:
            shutil.copyfile(source / name, staging / name)  # real files: nltk refuses symlinks
        lexnames = resources.files("textgen_core").joinpath("data", "wordnet", "lexnames").read_text()
        (staging / "lexnames").write_text(lexnames)
        (staging / "SOURCE").write_text(stamp)
        if target.exists():
            stale = Path(tempfile.mkdtemp(prefix="wordnet-stale-", dir=target.parent))
            try:
                os.replace(target, stale / "old")
            except OSError:
                pass  # another process is replacing it too; ours goes in below or theirs stays
            shutil.rmtree(stale, ignore_errors=True)
        try:
            os.replace(staging, target)
        except OSError:
            if not (target / "SOURCE").is_file():  # nobody else finished it either
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target.resolve()
