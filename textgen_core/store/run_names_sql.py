"""Run names, tags and notes: the one write path of ``run_names`` (a row per run that has any of them).

A name is unique in a file (a run can then be addressed by it); tags are short words, a run has each at most once;
a note is free text. None of them changes what a run scored.
"""

from __future__ import annotations

from typing import Any, Sequence

import duckdb
import pandas as pd

from ..errors import ParameterError, StoreError
from .database import Part, reads, writes
from .run_sql import require_run

RUN_NAMES_DDL = (
    """CREATE TABLE IF NOT EXISTS run_names (
        run_id INTEGER PRIMARY KEY,
        name VARCHAR,
        tags VARCHAR[],
        note VARCHAR)""",
)
#: Longest name and tag accepted (a tag is one word of letters, digits, '-', '_', '.', ':', '/').
NAME_MAX, TAG_MAX, NOTE_MAX = 200, 64, 10_000
_TAG_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:/")


def clean_name(name: str) -> str:
    """A run name as stored: trimmed, one line, not a bare number (that would read as a run id)."""
    text = " ".join(str(name).split())
    if not text:
        raise ParameterError("a run name cannot be empty")
    if len(text) > NAME_MAX:
        raise ParameterError(f"a run name has at most {NAME_MAX} characters, this one {len(text)}")
    if text.isdigit():
        raise ParameterError(f"a run name cannot be a bare number ({text!r} would read as a run id)")
    if ":" in text:
        raise ParameterError(f"a run name cannot hold ':' ({text!r}): RUN:MODEL splits on it")
    return text


def clean_tag(tag: str) -> str:
    """A tag as stored: one word, checked against :data:`_TAG_CHARS`."""
    text = str(tag).strip()
    if not text:
        raise ParameterError("a tag cannot be empty")
    bad = sorted(set(text) - _TAG_CHARS)
    if bad:
        raise ParameterError(f"tag {text!r} holds {''.join(bad)!r}: use letters, digits and - _ . : /")
    if len(text) > TAG_MAX:
        raise ParameterError(f"a tag has at most {TAG_MAX} characters, {text!r} has {len(text)}")
    return text


def forget_run_names(cur: duckdb.DuckDBPyConnection, run_id: int) -> None:
    """Inside a write: a deleted run's name, tags and note go with it."""
    try:
        cur.execute("DELETE FROM run_names WHERE run_id = ?", [run_id])
    except duckdb.CatalogException:  # pragma: no cover - every read-write open creates the table
        pass


class RunNames(Part):
    """The ``run_names`` table: set a run's name, change its tags, write its note; read them."""

    def _row(self, cur: duckdb.DuckDBPyConnection, run_id: int) -> tuple[Any, list[str], Any]:
        require_run(cur, run_id)
        found = cur.execute("SELECT name, tags, note FROM run_names WHERE run_id = ?", [run_id]).fetchone()
        return (found[0], list(found[1] or []), found[2]) if found else (None, [], None)

    def _put(self, cur: duckdb.DuckDBPyConnection, run_id: int, name: Any, tags: Sequence[str], note: Any) -> None:
        cur.execute("DELETE FROM run_names WHERE run_id = ?", [run_id])
        if name is not None or tags or note is not None:
            cur.execute("INSERT INTO run_names VALUES (?, ?, ?, ?)", [run_id, name, list(tags), note])

    @writes
    def label_run(self, run_id: int, *, name: str | None = None, add_tags: Sequence[str] = (),
                  remove_tags: Sequence[str] = (), note: str | None = None, clear_name: bool = False) -> None:
        """Name a run (refused when another run has the name), add and remove tags, set its note ('' clears it)."""
        cur = self.cur
        old_name, tags, old_note = self._row(cur, run_id)
        if name is not None:
            name = clean_name(name)
            clash = cur.execute("SELECT run_id FROM run_names WHERE name = ? AND run_id <> ?",
                                [name, run_id]).fetchone()
            if clash:
                raise StoreError(f"run {clash[0]} is already named {name!r}; choose another name")
        if note is not None and len(note) > NOTE_MAX:
            raise ParameterError(f"a note has at most {NOTE_MAX:,} characters, this one {len(note):,}")
        adding = [clean_tag(t) for t in add_tags]
        dropping = {clean_tag(t) for t in remove_tags}
        kept = [t for t in dict.fromkeys([*tags, *adding]) if t not in dropping]
        new_name = None if clear_name else (name if name is not None else old_name)
        new_note = (note.strip() or None) if note is not None else old_note
        self._put(cur, run_id, new_name, kept, new_note)

    @reads
    def run_labels(self) -> pd.DataFrame:
        """run_id, name, tags, note of every run (empty name, tags and note for a run without any)."""
        try:
            return self.cur.execute(
                "SELECT r.run_id, n.name, coalesce(n.tags, []) AS tags, n.note FROM runs r "
                "LEFT JOIN run_names n USING (run_id) ORDER BY r.run_id").df()
        except duckdb.CatalogException:  # a file made before run names, opened read-only
            return self.cur.execute("SELECT run_id, NULL AS name, [] AS tags, NULL AS note FROM runs "
                                    "ORDER BY run_id").df()

    @reads
    def run_id(self, name_or_id: str | int) -> int:
        """A run by its id or its name."""
        text = str(name_or_id).strip()
        if text.isdigit():
            if not self.cur.execute("SELECT 1 FROM runs WHERE run_id = ?", [int(text)]).fetchone():
                raise StoreError(f"no run with id {text}")
            return int(text)
        try:
            row = self.cur.execute("SELECT run_id FROM run_names WHERE name = ?", [text]).fetchone()
        except duckdb.CatalogException:
            row = None
        if row is None:
            raise StoreError(f"no run named {text!r} (a run is named with 'textgen-eval rename RUN NAME')")
        return int(row[0])
