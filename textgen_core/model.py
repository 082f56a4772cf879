"""The normalized data model: one row per (datum id, model)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

#: Fields of a normalized row that metrics can require.
TEXT_FIELDS = ("query", "prediction", "references", "contexts")


@dataclass(frozen=True, slots=True)
class Datum:
    """One model's output for one datum (question, document, prompt...)."""

    datum_id: str
    model: str
    query: str | None = None
    prediction: str | None = None
    references: tuple[str, ...] = ()
    contexts: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Dataset:
    """A normalized dataset: rows plus where they came from and how columns were mapped."""

    name: str
    rows: list[Datum]
    source: str = ""
    mapping: Mapping[str, Any] = field(default_factory=dict)
    metadata_columns: tuple[str, ...] = ()
    #: Problems that did not stop the load (e.g. references that read 'NaN'), one message each.
    warnings: tuple[str, ...] = ()

    @property
    def models(self) -> list[str]:
        seen: dict[str, None] = {}
        for row in self.rows:
            seen.setdefault(row.model, None)
        return list(seen)

    def has_field(self, name: str) -> bool:
        """True when at least one row has a non-empty value for a normalized field."""
        if name in TEXT_FIELDS:
            return any(getattr(r, name) for r in self.rows)
        return name in self.metadata_columns


@dataclass(frozen=True, slots=True)
class Cell:
    """One score of one row: a value, or unscored with a reason. Never both."""

    value: float | None
    details: Mapping[str, Any] | None = None
    reason: str | None = None

    def __reduce__(self) -> tuple:
        # Rebuilt from its three fields: a pool worker's cells unpickle fast in the parent.
        return (Cell, (self.value, self.details, self.reason))

    @staticmethod
    def unscored(reason: str, details: Mapping[str, Any] | None = None) -> "Cell":
        return Cell(None, details, reason)
