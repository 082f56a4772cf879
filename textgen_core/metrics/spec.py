"""The one contract every metric declares: inputs, parameters, direction, range.

A metric is declared once as a :class:`MetricSpec`. The CLI, the dashboard's
metric picker, input validation, the docs and the reproducibility signature
all read that declaration; nothing else restates it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import metadata as importlib_metadata
from typing import Any, Callable, Literal, Mapping, Sequence

from ..errors import ParameterError
from ..model import Cell, Datum

ParamKind = Literal["bool", "int", "float", "str", "choice", "choices", "floats"]
Direction = Literal["higher", "lower", "none"]
Group = Literal["lexical", "llm", "endpoint"]
#: The word users read for each group, everywhere (CLI, dashboard, README): "llm" metrics are "judge" metrics.
GROUP_WORDS: dict[str, str] = {"lexical": "lexical", "llm": "judge", "endpoint": "endpoint"}

#: A lexical scorer: rows in, one {score name: Cell} mapping per row out.
RowScorer = Callable[[Sequence[Datum], Mapping[str, Any]], list[dict[str, Cell]]]
#: Corpus aggregates of one model's rows: {score name: value}.
CorpusScorer = Callable[[Sequence[Datum], Sequence[dict[str, Cell]], Mapping[str, Any]], dict[str, float]]


@dataclass(frozen=True)
class Param:
    """One metric parameter with its default, documented once."""

    name: str
    kind: ParamKind
    default: Any
    help: str
    choices: tuple[Any, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    #: True when the value names a dataset column the metric reads.
    is_column: bool = False

    def coerce(self, raw: Any, metric: str = "") -> Any:
        """Validate ``raw`` (a Python value or a CLI string) and return the typed value."""
        where = f"{metric}.{self.name}" if metric else self.name
        try:
            value = self._convert(raw)
        except (TypeError, ValueError) as exc:
            raise ParameterError(f"parameter {where}: {exc}") from None
        self._check(value, where)
        return value

    def _convert(self, raw: Any) -> Any:
        if self.kind == "bool":
            if isinstance(raw, bool):
                return raw
            text = str(raw).strip().lower()
            if text in {"1", "true", "yes", "on"}:
                return True
            if text in {"0", "false", "no", "off"}:
                return False
            raise ValueError(f"expected true or false, got {raw!r}")
        if self.kind == "int":
            if isinstance(raw, bool) or (isinstance(raw, float) and not raw.is_integer()):
                raise ValueError(f"expected a whole number, got {raw!r}")
            return int(raw)
        if self.kind == "float":
            if isinstance(raw, bool):
                raise ValueError(f"expected a number, got {raw!r}")
            return float(raw)
        if self.kind == "floats":
            items = _split_list(raw)
            if not items:
                raise ValueError("expected at least one number")
            return tuple(float(x) for x in items)
        if self.kind == "choices":
            items = tuple(str(x).strip() for x in _split_list(raw))
            if not items:
                raise ValueError("expected at least one choice")
            return items
        if raw is None:
            return None
        return str(raw)

    def _check(self, value: Any, where: str) -> None:
        allowed = self.choices
        if self.kind == "choice" and allowed and value not in allowed:
            raise ParameterError(f"parameter {where}: {value!r} is not one of {', '.join(map(str, allowed))}")
        if self.kind == "choices" and allowed:
            bad = [v for v in value if v not in allowed]
            if bad:
                raise ParameterError(f"parameter {where}: {', '.join(bad)} not in {', '.join(map(str, allowed))}")
        numbers = value if self.kind == "floats" else (value,) if self.kind in {"int", "float"} else ()
        for number in numbers:
            if number != number:  # NaN
                raise ParameterError(f"parameter {where}: NaN is not allowed")
            if self.minimum is not None and number < self.minimum:
                raise ParameterError(f"parameter {where}: {number} is below the minimum {self.minimum}")
            if self.maximum is not None and number > self.maximum:
                raise ParameterError(f"parameter {where}: {number} is above the maximum {self.maximum}")


def _split_list(raw: Any) -> list[Any]:
    if isinstance(raw, (list, tuple)):
        return list(raw)
    text = str(raw).strip()
    if text.startswith("["):
        return list(json.loads(text))
    return [part for part in (p.strip() for p in text.split(",")) if part]


@dataclass(frozen=True)
class MetricSpec:
    """Everything about a metric that is said once."""

    name: str
    label: str
    group: Group
    description: str
    #: Normalized fields that must be non-empty: prediction, references, contexts, query.
    needs: tuple[str, ...]
    #: Score names this metric writes, given its resolved parameters.
    outputs: Callable[[Mapping[str, Any]], tuple[str, ...]]
    params: tuple[Param, ...] = ()
    direction: Direction = "higher"
    value_range: tuple[float, float | None] = (0.0, 1.0)
    #: Packages whose versions change the numbers (go into the signature).
    libraries: tuple[str, ...] = ()
    #: Short tokenizer label for the signature, from the parameters.
    tokenizer: Callable[[Mapping[str, Any]], str] | None = None
    #: Lexical metrics: per-row scorer, and optional corpus aggregate.
    score: RowScorer | None = None
    corpus: CorpusScorer | None = None
    #: True when rows depend on each other under these parameters (pass@k grouped by problem):
    #: the runner then scores all rows in one call instead of in chunks.
    whole_dataset: Callable[[Mapping[str, Any]], bool] = field(default=lambda _params: False)
    #: Returns a reason when the metric cannot run on this machine (missing data files...).
    unavailable: Callable[[], str | None] = field(default=lambda: None)
    #: Documented limits and edge-case behaviour, shown in docs and the picker.
    notes: str = ""
    #: Judge-driven metrics attach their plan here (see textgen_core.judge).
    plan: Any = None
    #: For an endpoint metric that can also run on this machine (semantic_similarity's local embedding model):
    #: True under the parameters that choose the local way; ``score`` then scores its rows like a lexical metric.
    local_when: Callable[[Mapping[str, Any]], bool] | None = None

    def is_local(self, params: Mapping[str, Any] | None = None) -> bool:
        """True when this metric is computed here, without a judge endpoint, under ``params`` (raw or resolved)."""
        if self.group == "lexical":
            return True
        return self.local_when is not None and self.local_when(self.resolve(params))

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise ParameterError(f"metric {self.name} has no parameter {name!r}")

    def resolve(self, raw: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Defaults filled in, every given value validated; unknown names are an error."""
        raw = dict(raw or {})
        known = {p.name for p in self.params}
        unknown = sorted(set(raw) - known)
        if unknown:
            hint = f"; known: {', '.join(sorted(known))}" if known else "; it takes no parameters"
            raise ParameterError(f"metric {self.name} has no parameter {', '.join(map(repr, unknown))}{hint}")
        resolved = {}
        for p in self.params:
            value = raw.get(p.name, p.default)
            resolved[p.name] = None if value is None else p.coerce(value, self.name)
        return resolved

    def signature(self, params: Mapping[str, Any]) -> str:
        """A sacrebleu-style reproducibility signature of a score under ``params``."""
        parts = [self.name]
        for p in self.params:
            value = params.get(p.name)
            if isinstance(value, (list, tuple)):
                value = ",".join(str(v) for v in value)
            parts.append(f"{p.name}:{value}")
        if self.tokenizer is not None:
            parts.append(f"tok:{self.tokenizer(params)}")
        for lib in (*self.libraries, "textgen-eval"):
            parts.append(f"{lib}:{package_version(lib)}")
        return "|".join(parts)

    def missing(self, available_fields: set[str], params: Mapping[str, Any]) -> list[str]:
        """Reasons this metric cannot run on a dataset offering ``available_fields``."""
        reasons = [f"needs a {name} column" for name in self.needs if name not in available_fields]
        for p in self.params:
            column = params.get(p.name)
            if p.is_column and column and column not in available_fields:
                reasons.append(f"needs a {column!r} column (parameter {p.name})")
        machine = self.unavailable()
        if machine:
            reasons.append(machine)
        return reasons


def package_version(name: str) -> str:
    try:
        return importlib_metadata.version(name)
    except importlib_metadata.PackageNotFoundError:
        return "unknown"


def fixed_outputs(*names: str) -> Callable[[Mapping[str, Any]], tuple[str, ...]]:
    """For metrics whose score names do not depend on parameters."""
    return lambda _params: names
