"""Per-row statistics for corpus aggregates, kept as packed numbers instead of cells.

Corpus BLEU, GLEU and WER re-add each row's statistics (n-gram matches and
totals, lengths, edit counts), which the metric keeps in a cell's ``details``.
A million cells with their dicts take about 600 MB; packed here they take about
a tenth of that, and :meth:`RowStats.cells` gives the metric back the same cells
(value, details; the reason is not needed for corpus values) in row order.
"""

from __future__ import annotations

from array import array
from typing import Any, Iterator, Mapping

from ..model import Cell

# A leaf is a number; a shape says where each number goes back (key, kind, length).
_MAX_SHAPES = 60_000  # shape numbers are stored as unsigned 16-bit
_Shape = tuple[tuple[str, bool, tuple[tuple[str, str, int], ...] | None], ...]


def _details_shape(details: Mapping[str, Any] | None) -> tuple[tuple[str, str, int], ...] | None:
    """(key, kind, length) per entry, or raise TypeError when a value is not a number or a list of numbers."""
    if details is None:
        return None
    shape = []
    for key, value in details.items():
        if type(value) in (int, float):
            shape.append((key, type(value).__name__, 1))
        elif type(value) in (list, tuple) and all(type(v) in (int, float) for v in value):
            kinds = {type(v).__name__ for v in value}
            if len(kinds) > 1:
                raise TypeError("mixed numbers")
            shape.append((key, f"{type(value).__name__}:{kinds.pop() if kinds else 'int'}", len(value)))
        else:
            raise TypeError(f"{key} is not numeric")
    return tuple(shape)


def _flatten(details: Mapping[str, Any], out: array) -> None:
    for value in details.values():
        if type(value) in (list, tuple):
            out.extend(float(v) for v in value)
        else:
            out.append(float(value))


def _rebuild(shape: tuple[tuple[str, str, int], ...], numbers: array, at: int) -> tuple[dict[str, Any], int]:
    details: dict[str, Any] = {}
    for key, kind, length in shape:
        if length == 1 and ":" not in kind:
            details[key] = int(numbers[at]) if kind == "int" else numbers[at]
            at += 1
            continue
        container, leaf = kind.split(":")
        values = numbers[at:at + length]
        items = [int(v) for v in values] if leaf == "int" else list(values)
        details[key] = tuple(items) if container == "tuple" else items
        at += length
    return details, at


class RowStats:
    """The cells of one (metric, model), in row order, packed as numbers wherever they are numbers."""

    def __init__(self) -> None:
        self._shapes: dict[_Shape | None, int] = {}
        self._order = array("H")  # shape number of each row
        self._numbers: list[array] = []  # per shape: values, then details numbers, row after row
        self._others: list[Mapping[str, Cell]] = []  # rows whose details hold more than numbers

    def __len__(self) -> int:
        return len(self._order)

    def __iter__(self) -> Iterator[dict[str, Cell]]:
        return self.cells()

    def add(self, cells: Mapping[str, Cell]) -> None:
        try:
            shape: _Shape | None = tuple((score, cell.value is not None, _details_shape(cell.details))
                                         for score, cell in cells.items())
        except TypeError:
            shape = None
        if shape not in self._shapes and len(self._shapes) >= _MAX_SHAPES:
            shape = None
        number = self._shapes.get(shape)
        if number is None:
            number = self._shapes[shape] = len(self._shapes)
            self._numbers.append(array("d"))
        self._order.append(number)
        if shape is None:
            self._others.append({s: Cell(c.value, c.details) for s, c in cells.items()})
            return
        out = self._numbers[number]
        for cell in cells.values():
            if cell.value is not None:
                out.append(cell.value)
            if cell.details is not None:
                _flatten(cell.details, out)

    def cells(self) -> Iterator[dict[str, Cell]]:
        """The rows' cells again, in the order they were added (values exact: floats round-trip)."""
        shapes = {number: shape for shape, number in self._shapes.items()}
        cursor = [0] * len(self._numbers)
        others = iter(self._others)
        for number in self._order:
            shape = shapes[number]
            if shape is None:
                yield next(others)
                continue
            numbers, at = self._numbers[number], cursor[number]
            row: dict[str, Cell] = {}
            for score, has_value, details_shape in shape:
                value = None
                if has_value:
                    value, at = numbers[at], at + 1
                details = None
                if details_shape is not None:
                    details, at = _rebuild(details_shape, numbers, at)
                row[score] = Cell(value, details)
            cursor[number] = at
            yield row

    def packed(self) -> tuple[dict, list, array, list]:
        """The packed form: each cell shape with its number, the numbers per shape, the rows' shape numbers in
        order, and the rows kept unpacked."""
        return self._shapes, self._numbers, self._order, self._others

    def extend(self, other: RowStats) -> None:
        """Append ``other``'s rows after these (packed arrays are appended, not unpacked)."""
        shapes, numbers, order, others = other.packed()
        renumber = []
        for shape, number in sorted(shapes.items(), key=lambda item: item[1]):
            if shape not in self._shapes and len(self._shapes) >= _MAX_SHAPES:
                raise ValueError("too many kinds of cells to pack")  # pragma: no cover - thousands of shapes
            mine = self._shapes.get(shape)
            if mine is None:
                mine = self._shapes[shape] = len(self._shapes)
                self._numbers.append(array("d"))
            renumber.append(mine)
            self._numbers[mine].extend(numbers[number])
        self._order.extend(array("H", [renumber[n] for n in order]))
        self._others.extend(others)
