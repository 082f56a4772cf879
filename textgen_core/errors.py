"""Errors that carry enough context for a user to fix their input."""

from __future__ import annotations


class TextgenError(Exception):
    """Base class for every error textgen-eval reports to a user."""


class InputError(TextgenError):
    """Bad user input, located by file, row and column where known.

    ``row`` is the 1-based data row (the header is not counted), as a
    spreadsheet user would count after the header line.
    """

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        row: int | None = None,
        column: str | None = None,
    ) -> None:
        self.message = message
        self.file = file
        self.row = row
        self.column = column
        super().__init__(self.describe())

    def describe(self) -> str:
        where = []
        if self.file:
            where.append(f"file {self.file!r}")
        if self.row is not None:
            where.append(f"row {self.row}")
        if self.column:
            where.append(f"column {self.column!r}")
        return f"{', '.join(where)}: {self.message}" if where else self.message


class ParameterError(TextgenError):
    """A metric or run parameter with an invalid value; names the parameter."""


class BudgetReached(TextgenError):
    """A run stopped at its spending cap (--max-cost / --max-calls); finished cells are kept, resume finishes it."""


class StoreError(TextgenError):
    """The database could not be opened or a stored object does not exist."""


class StoreBusy(StoreError):
    """Another program held the database file longer than the lock timeout; nothing of the operation was written."""
