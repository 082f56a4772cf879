"""pass@k, the unbiased estimator of Chen et al. (2021, the Codex paper).

For a problem with n samples of which c pass: pass@k = 1 - C(n-c, k) / C(n, k),
computed as 1 - prod_{i=n-c+1..n} (1 - k/i), which stays accurate for large n.
Either each row carries its own n and c, or (``group_column`` set) the rows
sharing a group value are the samples of one problem and a pass column says
which passed.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from ...model import Cell, Datum
from ..spec import Param
from .base import LexicalSpec, Scorer, WholeNumbers
from .tokenize import TextCache

PASSED = frozenset({"true", "1", "yes", "pass", "passed", "y", "t"})
FAILED = frozenset({"false", "0", "no", "fail", "failed", "n", "f"})


def pass_at_k(n: int, c: int, k: int) -> float:
    """1 - C(n-c, k)/C(n, k); 1.0 when fewer than k samples fail. Needs n >= k."""
    if n - c < k:
        return 1.0
    product = 1.0
    for i in range(n - c + 1, n + 1):
        product *= 1.0 - k / i
    return 1.0 - product


def _ks(params: Mapping[str, Any]) -> list[int]:
    return list(dict.fromkeys(int(k) for k in params.get("k") or (1,)))


def outputs(params: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(f"pass@{k}" for k in _ks(params))


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or (isinstance(value, str) and not value.strip())


def _count(value: Any) -> int | None:
    """A non-negative whole number from a cell (int, whole float, numeric text), else None."""
    if isinstance(value, bool) or _missing(value):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if not number.is_integer() or number < 0:
        return None
    return int(number)


def passed(value: Any) -> bool | None:
    """Whether a pass cell says passed: true/1/yes/pass/passed (any case); None when empty or unreadable."""
    if _missing(value):
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value != 0
    text = str(value).strip().lower()
    if text in PASSED:
        return True
    if text in FAILED:
        return False
    return None


def _cells(n: int, c: int, ks: list[int], details: dict[str, Any]) -> dict[str, Cell]:
    cells = {}
    for k in ks:
        if n < k:
            cells[f"pass@{k}"] = Cell.unscored(f"only {n} samples, fewer than k={k}", details)
        else:
            cells[f"pass@{k}"] = Cell(pass_at_k(n, c, k), details)
    return cells


def score_chunk(rows: Sequence[Datum], params: Mapping[str, Any], cache: TextCache) -> list[dict[str, Cell]]:
    ks = _ks(params)
    names = outputs(params)
    group_column = params.get("group_column")
    if not group_column:
        return [_per_row(row, params, ks, names) for row in rows]
    pass_column = params["pass_column"]
    groups: dict[tuple[str, str], list[int]] = {}
    results: list[dict[str, Cell] | None] = [None] * len(rows)
    flags: list[bool | None] = [None] * len(rows)
    for index, row in enumerate(rows):
        group = row.metadata.get(group_column)
        if _missing(group):
            results[index] = {name: Cell.unscored(f"no problem id in column {group_column!r}") for name in names}
            continue
        flag = passed(row.metadata.get(pass_column))
        if flag is None:
            reason = f"no pass/fail value in column {pass_column!r}: {row.metadata.get(pass_column)!r}"
            results[index] = {name: Cell.unscored(reason, {"group": str(group)}) for name in names}
            continue
        flags[index] = flag
        groups.setdefault((row.model, str(group)), []).append(index)
    for (_model, group), members in groups.items():
        n = len(members)
        c = sum(1 for i in members if flags[i])
        for i in members:
            results[i] = _cells(n, c, ks, {"group": group, "n": n, "c": c, "passed": flags[i]})
    return results  # type: ignore[return-value]


def _per_row(row: Datum, params: Mapping[str, Any], ks: list[int], names: tuple[str, ...]) -> dict[str, Cell]:
    n_column, c_column = params["n_column"], params["c_column"]
    n = _count(row.metadata.get(n_column))
    c = _count(row.metadata.get(c_column))
    if n is None or c is None:
        bad = n_column if n is None else c_column
        reason = f"column {bad!r} holds no sample count: {row.metadata.get(bad)!r}"
        return {name: Cell.unscored(reason) for name in names}
    if c > n:
        return {name: Cell.unscored(f"c={c} passing samples exceed n={n}") for name in names}
    return _cells(n, c, ks, {"n": n, "c": c})


def corpus(rows: Sequence[Datum], cells: Sequence[Mapping[str, Cell]], params: Mapping[str, Any]) -> dict[str, float]:
    """Mean pass@k over problems: rows, or distinct groups recounted from every row's pass flag."""
    ks = _ks(params)
    if not params.get("group_column"):
        out = {}
        for k in ks:
            values = [c[f"pass@{k}"].value for c in cells if c.get(f"pass@{k}") is not None]
            values = [v for v in values if v is not None]
            if values:
                out[f"pass@{k}"] = math.fsum(values) / len(values)
        return out
    # Recount n and c per group from the rows' own flags, so chunked scoring cannot split a group.
    groups: dict[str, list[int]] = {}
    for row_cells in cells:
        cell = row_cells.get(f"pass@{ks[0]}")
        details = cell.details if cell is not None else None
        if not details or "passed" not in details:
            continue
        tally = groups.setdefault(str(details["group"]), [0, 0])
        tally[0] += 1
        tally[1] += 1 if details["passed"] else 0
    out = {}
    for k in ks:
        values = [pass_at_k(n, c, k) for n, c in groups.values() if n >= k]
        if values:
            out[f"pass@{k}"] = math.fsum(values) / len(values)
    return out


def _columns(params: Mapping[str, Any]) -> tuple[str, ...]:
    return ("group_column", "pass_column") if params.get("group_column") else ("n_column", "c_column")


SPEC = LexicalSpec(
    name="pass_at_k",
    label="pass@k",
    group="lexical",
    description="Probability that at least one of k samples passes, estimated without bias from n samples "
    "of which c pass (Chen et al. 2021).",
    needs=(),
    outputs=outputs,
    params=(
        WholeNumbers("k", "floats", (1,), "Values of k; each gives a score pass@k.", minimum=1),
        Param("n_column", "str", "n", "Column with the number of samples of the row's problem.", is_column=True),
        Param("c_column", "str", "c", "Column with how many of those samples passed.", is_column=True),
        Param(
            "group_column", "str", None,
            "If set, rows sharing this column's value are samples of one problem (n and c are counted), "
            "and n_column/c_column are not used.",
            is_column=True,
        ),
        Param(
            "pass_column", "str", "passed",
            "With group_column: the column saying whether each sample passed (true/1/yes/pass/passed, or "
            "false/0/no/fail/failed).",
            is_column=True,
        ),
    ),
    tokenizer=lambda _p: "none",
    score=Scorer(per_chunk=score_chunk),
    corpus=corpus,
    used_columns=_columns,
    whole_dataset=lambda params: bool(params.get("group_column")),
    notes="pass@k = 1 - C(n-c, k)/C(n, k), computed as 1 - prod_{i=n-c+1}^{n}(1 - k/i); 1 when fewer than k "
    "samples fail; unscored when n < k. Per-row mode reads n and c from n_column and c_column. Grouped mode "
    "(group_column set) counts n and c over the rows of each (model, group) and gives every row its group's "
    "value (details: group, n, c, passed); rows without a group or a readable pass value are unscored and "
    "not counted. The runner scores grouped mode over all rows at once, so a group is never split; the model-level "
    "aggregate recounts every group from the rows' pass flags and averages over distinct problems.",
)
