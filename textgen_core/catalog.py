"""Storing a loaded dataset as a version of a named dataset, without ever replacing one that runs may depend on."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

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
    """Store ``dataset`` as the next version of the dataset named ``name`` under the first free name ("outputs",
    "outputs (2)"...), unless a stored dataset has the same content (any name): that one is used instead.

    Re-running a file therefore adds a run to the same version, and an edited file becomes a new version of the
    same named dataset instead of deleting the earlier one with its runs.
    """
    name = " ".join(name.split()) or "dataset"
    chosen, _ = store.streams.free_dataset_names(name)
    dataset_id, stamp = store.datasets.save_version(dataset, chosen, name)
    if stamp.same_as is not None:
        found = store.versions.versions(stamp.family)
        stored_name = str(found.loc[found["dataset_id"] == dataset_id, "name"].iloc[0])
        return StoredVersion(dataset_id, stored_name, True, stamp.family, stamp.version)
    return StoredVersion(dataset_id, chosen, False, stamp.family, stamp.version,
                         _since_previous(store, stamp.family, stamp.version, dataset_id))


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
