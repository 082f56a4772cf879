"""Dataset versions: the one write path of ``dataset_versions``, and the reads that compare two versions.

A stored dataset (a row of ``datasets``) is one *version* of a named dataset (its *family*). Its content hash is
computed here, in SQL, from its mapped rows in a canonical order (datum id, then model): ids, models, query,
prediction, references, contexts and metadata. Row order and the file's name do not change it, so the same
content loaded again is recognised as the version already stored. Runs point at a dataset id, so every run is
pinned to the version it scored.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

import duckdb
import pandas as pd

from ..errors import StoreError
from .database import Part, reads

#: One row's text for the content hash (metadata minified by DuckDB, so spacing in the JSON does not count).
_ROW_TEXT = ("to_json(struct_pack(i := datum_id, m := model, q := query, p := prediction, r := refs, "
             "c := contexts, x := CAST(json(metadata) AS VARCHAR)))")
#: content hash of every dataset in ``data`` (or of one: add a WHERE on dataset_id in the inner query).
_HASHES = ("SELECT dataset_id, md5(string_agg(h, '' ORDER BY datum_id, model)) AS content_hash FROM "
           f"(SELECT dataset_id, datum_id, model, md5({_ROW_TEXT}) AS h FROM data {{where}}) GROUP BY dataset_id")
#: A name made unique by a number ('pairs (2)') belongs to the family of the name without it.
FAMILY_SQL = r"regexp_replace(name, ' \([0-9]+\)$', '')"
_SUFFIX = re.compile(r" \([0-9]+\)$")

VERSIONS_DDL = (
    """CREATE TABLE IF NOT EXISTS dataset_versions (
        dataset_id INTEGER PRIMARY KEY,
        family VARCHAR NOT NULL,
        version INTEGER NOT NULL,
        content_hash VARCHAR)""",
)
#: Every stored dataset of a file made before versions: numbered in its family by creation order, hashed.
BACKFILL = (
    "INSERT OR IGNORE INTO dataset_versions SELECT d.dataset_id, d.family, "
    "CAST(row_number() OVER (PARTITION BY d.family ORDER BY d.dataset_id) AS INTEGER), h.content_hash "
    f"FROM (SELECT dataset_id, {FAMILY_SQL} AS family FROM datasets) d "
    f"LEFT JOIN ({_HASHES.format(where='')}) h USING (dataset_id)"
)
#: The versions as the table would hold them, read from ``datasets`` alone (an old file opened read-only).
_DERIVED = (
    f"(SELECT d.dataset_id, {FAMILY_SQL} AS family, "
    f"CAST(row_number() OVER (PARTITION BY {FAMILY_SQL} ORDER BY d.dataset_id) AS INTEGER) AS version, "
    "NULL AS content_hash FROM datasets d)")


class Stamp(NamedTuple):
    """What storing a dataset made of it: its family, version number and hash, and an earlier dataset with the
    same content (None when the content is new)."""

    family: str
    version: int
    content_hash: str
    same_as: int | None


def family_of(name: str) -> str:
    """The family of a dataset name: the name without a trailing ' (N)' that only made it unique."""
    return _SUFFIX.sub("", name)


def stamp_version(cur: duckdb.DuckDBPyConnection, dataset_id: int, family: str | None = None) -> Stamp:
    """Inside a write: hash a stored dataset's rows and record it as the next version of ``family`` (default:
    the family of its name). ``same_as`` names an earlier dataset with the same hash (the caller decides)."""
    name = cur.execute("SELECT name FROM datasets WHERE dataset_id = ?", [dataset_id]).fetchone()
    if name is None:
        raise StoreError(f"no dataset with id {dataset_id}")
    family = family_of(family or name[0])
    found = cur.execute(_HASHES.format(where="WHERE dataset_id = ?"), [dataset_id]).fetchone()
    content = found[1] if found else cur.execute("SELECT md5('')").fetchone()[0]
    same = cur.execute("SELECT dataset_id FROM dataset_versions WHERE content_hash = ? AND dataset_id <> ? "
                       "ORDER BY dataset_id LIMIT 1", [content, dataset_id]).fetchone()
    cur.execute("DELETE FROM dataset_versions WHERE dataset_id = ?", [dataset_id])
    version = cur.execute("SELECT coalesce(max(version), 0) + 1 FROM dataset_versions WHERE family = ?",
                          [family]).fetchone()[0]
    cur.execute("INSERT INTO dataset_versions VALUES (?, ?, ?, ?)", [dataset_id, family, version, content])
    return Stamp(family, int(version), str(content), int(same[0]) if same else None)


def forget_version(cur: duckdb.DuckDBPyConnection, dataset_id: int) -> None:
    """Inside a write: a deleted dataset's version row goes with it (its number may be given again)."""
    try:
        cur.execute("DELETE FROM dataset_versions WHERE dataset_id = ?", [dataset_id])
    except duckdb.CatalogException:  # pragma: no cover - every read-write open creates the table
        pass


def versions_table(cur: duckdb.DuckDBPyConnection) -> str:
    """The versions table, or the same rows derived from ``datasets`` in an old file opened read-only."""
    try:
        cur.execute("SELECT 1 FROM dataset_versions LIMIT 0")
        return "dataset_versions"
    except duckdb.CatalogException:
        return _DERIVED


class DatasetVersions(Part):
    """Reads of dataset versions: a family's versions, one version's id, and what changed between two."""

    def _table(self) -> str:
        return versions_table(self.cur)

    @reads
    def versions(self, family: str | None = None) -> pd.DataFrame:
        """dataset_id, name, family, version, content_hash, created_at, n_rows, n_datums, models, n_runs; by family,
        version."""
        table = self._table()  # a constant or a constant sub-query
        return self.cur.execute(
            "SELECT v.dataset_id, d.name, v.family, v.version, v.content_hash, d.created_at, d.n_rows, "
            "(SELECT count(DISTINCT x.datum_id) FROM data x WHERE x.dataset_id = v.dataset_id) AS n_datums, d.models, "
            "(SELECT count(*) FROM runs r WHERE r.dataset_id = v.dataset_id) AS n_runs "
            f"FROM {table} v JOIN datasets d USING (dataset_id) WHERE (? IS NULL OR v.family = ?) "
            "ORDER BY v.family, v.version", [family, family]).df()

    @reads
    def family_of_dataset(self, dataset_id: int) -> tuple[str, int]:
        """(family, version) of a stored dataset."""
        row = self.cur.execute(f"SELECT family, version FROM {self._table()} WHERE dataset_id = ?",
                               [dataset_id]).fetchone()
        if row is None:
            raise StoreError(f"no dataset with id {dataset_id}")
        return str(row[0]), int(row[1])

    @reads
    def family(self, name: str) -> str:
        """The family a user means by ``name``: a family name, or the name (or id) of one of its datasets."""
        table = self._table()
        row = self.cur.execute(
            f"SELECT v.family FROM {table} v JOIN datasets d USING (dataset_id) WHERE v.family = ? OR d.name = ? "
            "OR CAST(d.dataset_id AS VARCHAR) = ? ORDER BY (v.family = ?) DESC LIMIT 1",
            [name, name, name, name]).fetchone()
        if row is None:
            known = [f for (f,) in self.cur.execute(f"SELECT DISTINCT family FROM {table} ORDER BY 1").fetchall()]
            raise StoreError(f"no dataset named {name!r}; datasets: {', '.join(known) or 'none yet'}")
        return str(row[0])

    @reads
    def version_id(self, family: str, version: int) -> int:
        """The dataset id of version ``version`` of ``family``."""
        table = self._table()
        row = self.cur.execute(f"SELECT dataset_id FROM {table} WHERE family = ? AND version = ?",
                               [family, int(version)]).fetchone()
        if row is None:
            have = [str(v) for (v,) in self.cur.execute(
                f"SELECT version FROM {table} WHERE family = ? ORDER BY 1", [family]).fetchall()]
            raise StoreError(f"dataset {family!r} has no version {version}; versions: {', '.join(have) or 'none'}")
        return int(row[0])

    @reads
    def same_content(self, dataset_id: int) -> int | None:
        """The first other stored dataset with this one's content hash (None: its content is new)."""
        row = self.cur.execute(
            f"SELECT o.dataset_id FROM {self._table()} v JOIN {self._table()} o ON o.content_hash = v.content_hash "
            "AND o.dataset_id <> v.dataset_id WHERE v.dataset_id = ? ORDER BY o.dataset_id LIMIT 1",
            [dataset_id]).fetchone()
        return int(row[0]) if row else None

    @reads
    def version_diff(self, old: int, new: int) -> dict[str, Any]:
        """What changed from dataset ``old`` to ``new``: datum ids added, removed and changed (query, references,
        contexts, metadata or any model's prediction), and models added and removed; each list sorted."""
        cur = self.cur
        per_datum = ("SELECT datum_id, list(struct_pack(m := model, q := query, p := prediction, r := refs, "
                     "c := contexts, x := CAST(json(metadata) AS VARCHAR)) ORDER BY model) AS rows "
                     "FROM data WHERE dataset_id = ? GROUP BY datum_id")
        rows = cur.execute(
            f"SELECT coalesce(a.datum_id, b.datum_id) AS datum_id, a.datum_id IS NULL AS added, "
            f"b.datum_id IS NULL AS removed FROM ({per_datum}) a FULL JOIN ({per_datum}) b USING (datum_id) "
            "WHERE a.datum_id IS NULL OR b.datum_id IS NULL OR a.rows IS DISTINCT FROM b.rows ORDER BY 1",
            [old, new]).fetchall()
        models = {key: {m for (m,) in cur.execute("SELECT DISTINCT model FROM data WHERE dataset_id = ?",
                                                   [key]).fetchall()} for key in (old, new)}
        return {
            "added": [d for d, a, _ in rows if a], "removed": [d for d, _, r in rows if r],
            "changed": [d for d, a, r in rows if not a and not r],
            "models_added": sorted(models[new] - models[old]), "models_removed": sorted(models[old] - models[new]),
        }

    @reads
    def changed_content(self, old: int, new: int) -> set[str]:
        """Datum ids in both datasets whose query or references differ: a comparison across versions leaves
        them out (the same id then names another question)."""
        content = ("SELECT datum_id, list(DISTINCT struct_pack(q := query, r := refs)) AS content FROM data "
                   "WHERE dataset_id = ? GROUP BY datum_id")
        return {d for (d,) in self.cur.execute(
            f"SELECT datum_id FROM ({content}) a JOIN ({content}) b USING (datum_id) "
            "WHERE list_sort(a.content) IS DISTINCT FROM list_sort(b.content)", [old, new]).fetchall()}
