"""Storing a dataset as a version of a named dataset, without ever replacing one that runs may depend on: one
policy (:func:`settle_version`) for every source of a run, whole file, chunks or Ray blocks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import pandas as pd

from .errors import StoreError
from .model import Dataset
from .store import Store


@dataclass(frozen=True)
class StoredVersion:
    """Where a loaded dataset went: its stored id and name, its family and version, whether identical content was
    already stored (then nothing new was written), and what changed since the family's previous version."""

    dataset_id: int
    name: str
    reused: bool
    family: str
    version: int
    #: version_diff of the family's previous version against this one; empty for a first version or reused content.
    diff: dict[str, Any] = field(default_factory=dict)

    def describe(self, rows: int) -> str:
        """One line for a person: stored or reused, which version, and the change from the version before."""
        if self.reused:
            return (f"using stored dataset {self.name!r} (version {self.version} of {self.family!r}, {rows} rows): "
                    "the same content is stored already, nothing was added")
        text = f"stored dataset {self.name!r} ({rows} rows) as version {self.version} of {self.family!r}"
        return text + (f"; since the version before: {diff_summary(self.diff)}" if self.diff else "")


def diff_summary(diff: dict[str, Any]) -> str:
    """'datums added 2, removed 1, changed 3; models added: c' (models only when some were added or removed)."""
    text = "datums " + ", ".join(f"{key} {len(diff.get(key, []))}" for key in ("added", "removed", "changed"))
    for key, word in (("models_added", "models added"), ("models_removed", "models removed")):
        if diff.get(key):
            text += f"; {word}: {', '.join(diff[key])}"
    return text


def store_version(store: Store, dataset: Dataset, name: str) -> StoredVersion:
    """Store a whole ``dataset`` as the next version of the dataset named ``name`` under the first free name
    ("outputs", "outputs (2)"...), then :func:`settle_version` (the same content stored already: that one is used).

    Re-running a file therefore adds a run to the same version, and an edited file becomes a new version of the
    same named dataset instead of deleting the earlier one with its runs.
    """
    name = " ".join(name.split()) or "dataset"
    chosen, earlier = store.streams.free_dataset_names(name)
    dataset_id = store.datasets.save_dataset(dataset, chosen, family=name)
    return settle_version(store, dataset_id, earlier)


def settle_version(store: Store, dataset_id: int, earlier: Sequence[str] = ()) -> StoredVersion:
    """The one dataset-save policy, applied by every source once a dataset's rows are all stored (a whole file,
    a file read in chunks, Ray blocks): when a stored dataset has the same content (by hash, any name; or, for
    files from before content hashes, the same rows under one of the ``earlier`` names of its family), the new
    copy's runs move there and the copy is deleted; otherwise it stays, as the next version of its family, with
    what changed since the version before."""
    same = store.versions.same_content(dataset_id)
    for candidate in earlier if same is None else ():
        try:
            other = store.datasets.dataset_id(candidate)
        except StoreError:  # deleted meanwhile (e.g. while a stopped run waited to be resumed)
            continue
        if other != dataset_id and store.streams.same_rows(other, dataset_id):
            same = other
            break
    if same is not None:
        store.streams.move_runs(dataset_id, same)
        return stored_version(store, same, True)
    return stored_version(store, dataset_id, False)


def stored_version(store: Store, dataset_id: int, reused: bool) -> StoredVersion:
    """The :class:`StoredVersion` of a dataset already stored (a streamed upload): its family, version and the change
    since the family's previous version (none when ``reused``: the content was stored already)."""
    family, version = store.versions.family_of_dataset(dataset_id)
    found = store.versions.versions(family)
    name = str(found.loc[found["dataset_id"] == dataset_id, "name"].iloc[0])
    diff = {} if reused else _since_previous(store, family, version, dataset_id)
    return StoredVersion(dataset_id, name, reused, family, version, diff)


def _since_previous(store: Store, family: str, version: int, dataset_id: int) -> dict[str, Any]:
    earlier = store.versions.versions(family)
    earlier = earlier[earlier["version"] < version]
    return store.versions.version_diff(int(earlier["dataset_id"].iloc[-1]), dataset_id) if len(earlier) else {}


def version_table(store: Store, family: str) -> pd.DataFrame:
    """Every version of ``family``, oldest first: version, dataset_id, name, created_at, n_rows, n_datums, models,
    n_runs, content_hash, and ``change``: what changed since the version before ('first version' for the first)."""
    with store.session():
        versions = store.versions.versions(family)
        changes, before = [], None
        for row in versions.itertuples():
            changes.append("first version" if before is None
                           else diff_summary(store.versions.version_diff(before, row.dataset_id)))
            before = row.dataset_id
    return versions.assign(change=changes)


def save_or_reuse(store: Store, dataset: Dataset, name: str) -> tuple[int, str, bool]:
    """(dataset id, name used, reused) of :func:`store_version`."""
    stored = store_version(store, dataset, name)
    return stored.dataset_id, stored.name, stored.reused
