"""Storing a loaded dataset without ever replacing one that runs may depend on."""

from __future__ import annotations

from .model import Dataset
from .store import Store


def save_or_reuse(store: Store, dataset: Dataset, name: str) -> tuple[int, str, bool]:
    """(dataset id, name used, reused): the stored dataset when one with the same rows exists under
    ``name`` or a numbered variant of it, else a new one under the first free name ("outputs (2)"...).

    Re-running a file therefore adds a run to the same dataset, and a changed file gets a new
    dataset instead of deleting the earlier one with its runs.
    """
    taken = set(store.list_datasets()["name"])
    candidates = [name] + [f"{name} ({i})" for i in range(2, len(taken) + 3)]
    for candidate in candidates:
        if candidate not in taken:
            dataset_id = store.save_dataset(dataset, candidate)
            return dataset_id, candidate, False
        existing = store.load_dataset(store.dataset_id(candidate))
        if existing.rows == dataset.rows:
            return store.dataset_id(candidate), candidate, True
    raise AssertionError("unreachable: there is always a free name")  # pragma: no cover
