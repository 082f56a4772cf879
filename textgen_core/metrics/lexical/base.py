"""Pieces every lexical metric module shares: the spec subclass, the scorer and its pass over rows,
parameter kinds, row helpers."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Mapping, Sequence

from ...errors import ParameterError
from ...gc_tuning import fewer_gc_passes
from ...model import Cell, Datum
from ..spec import MetricSpec, Param
from .tokenize import TOKENIZER_LABELS, WORD_TOKENIZERS, TextCache

#: Scores one row given the per-call cache; built once per call from the resolved parameters.
RowFn = Callable[[Datum, TextCache], dict[str, Cell]]
#: A spec's parameter resolution: raw parameters (None: the defaults) -> resolved ones.
Resolve = Callable[[Mapping[str, Any] | None], dict[str, Any]]
#: Scores a whole chunk at once (for metrics whose rows depend on each other).
ChunkFn = Callable[[Sequence[Datum], Mapping[str, Any], TextCache], list[dict[str, Cell]]]

NO_PREDICTION = "no prediction"
NO_REFERENCES = "no references"


class Scorer:
    """``MetricSpec.score`` of a lexical metric: row by row (``per_row``) or by chunk (``per_chunk``).

    ``per_row(params)`` returns the function scoring one row, so parameters
    are parsed once per call. Module-level functions keep it picklable.
    """

    def __init__(self, per_row: Callable[..., RowFn] | None = None, per_chunk: ChunkFn | None = None,
                 sees_chunk: bool = False, *, resolve: Resolve | None = None) -> None:
        if (per_row is None) == (per_chunk is None):
            raise ValueError("a lexical scorer takes exactly one of per_row and per_chunk")
        self.per_row = per_row
        self.per_chunk = per_chunk
        #: per_row(params, rows) is also given the chunk's rows, to compute what it can for all at once.
        self.sees_chunk = sees_chunk
        #: The owning spec's ``resolve`` (see :meth:`for_spec`): raw parameters become resolved ones.
        self.resolve = resolve

    def for_spec(self, resolve: Resolve) -> "Scorer":
        """This scorer as one spec's ``score``: a new scorer that resolves parameters with ``resolve``
        (a scorer several specs share is never changed)."""
        return Scorer(self.per_row, self.per_chunk, self.sees_chunk, resolve=resolve)

    def __call__(self, rows: Sequence[Datum], params: Mapping[str, Any]) -> list[dict[str, Cell]]:
        if self.resolve is None:
            raise RuntimeError("this lexical scorer is not the score of a LexicalSpec")
        return run(rows, [(self, self.resolve(params))])[0]


def run(rows: Sequence[Datum], jobs: Sequence[tuple[Scorer, Mapping[str, Any]]]) -> list[list[dict[str, Cell]]]:
    """Cells of each (scorer, resolved parameters) job, rows outermost so a row's tokens are shared."""
    rows = list(rows)
    cache = TextCache(find=partial(_repeated, rows))
    results: list[list[dict[str, Cell]]] = [[] for _ in jobs]
    per_row = [(results[i], scorer.per_row(params, rows) if scorer.sees_chunk else scorer.per_row(params))
               for i, (scorer, params) in enumerate(jobs) if scorer.per_row]
    with fewer_gc_passes():
        if per_row:
            for row in rows:
                for out, score_row in per_row:
                    out.append(score_row(row, cache))
                cache.next_row()
        for i, (scorer, params) in enumerate(jobs):
            if scorer.per_chunk is not None:
                results[i] = scorer.per_chunk(rows, params, cache)
    return results


def _repeated(rows: Sequence[Datum]) -> set[str]:
    """Texts that occur more than once among the rows' predictions and references."""
    seen: set[str] = set()
    repeated: set[str] = set()
    for row in rows:
        for text in (row.prediction, *row.references):
            if type(text) is not str:
                continue
            if text in seen:
                repeated.add(text)
            else:
                seen.add(text)
    return repeated


@dataclass(frozen=True)
class LexicalSpec(MetricSpec):
    """A MetricSpec whose ``resolve`` also checks rules that involve several parameters."""

    check: Callable[[Mapping[str, Any]], None] | None = None
    #: Names of the column parameters the given parameters actually read (default: all of them).
    used_columns: Callable[[Mapping[str, Any]], Sequence[str]] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.score, Scorer):  # built with the spec: its own scorer, resolving as the spec does
            object.__setattr__(self, "score", self.score.for_spec(self.resolve))

    def resolve(self, raw: Mapping[str, Any] | None = None) -> dict[str, Any]:
        resolved = super().resolve(raw)
        if self.check is not None:
            self.check(resolved)
        return resolved

    def missing(self, available_fields: set[str], params: Mapping[str, Any]) -> list[str]:
        if self.used_columns is None:
            return super().missing(available_fields, params)
        used = set(self.used_columns(params))
        # A used column parameter given as None (a form left at "(none)") would leave every row unscored.
        unset = [f"parameter {name} names no column: choose the column that holds it"
                 for name in sorted(used) if name in params and not params[name]]
        unused = {p.name: None for p in self.params if p.is_column and p.name not in used}
        return unset + super().missing(available_fields, {**params, **unused})


@dataclass(frozen=True)
class WholeNumbers(Param):
    """A ``floats`` parameter whose every value must be a whole number (such as pass@k's k)."""

    def _check(self, value: Any, where: str) -> None:
        super()._check(value, where)
        for number in value:
            if not float(number).is_integer():
                raise ParameterError(f"parameter {where}: {number} is not a whole number")

    def coerce(self, raw: Any, metric: str = "") -> Any:
        return tuple(int(number) for number in super().coerce(raw, metric))


@dataclass(frozen=True)
class NGramWeights(Param):
    """BLEU's n-gram weights: non-negative, not all zero, at most :attr:`longest` of them."""

    longest: int = 9

    def _check(self, value: Any, where: str) -> None:
        super()._check(value, where)
        if len(value) > self.longest:
            raise ParameterError(f"parameter {where}: at most {self.longest} weights (n-gram orders), got {len(value)}")
        if not any(value):
            raise ParameterError(f"parameter {where}: the weights must not all be zero")


def tokenizer_param(default: str = "regex") -> Param:
    """The word-tokenizer choice shared by BLEU, GLEU and METEOR."""
    return Param(
        "tokenizer",
        "choice",
        default,
        "How texts are split into words. regex: case-sensitive \\w+|\\$[\\d]+|[^\\s\\.]+ tokens, equal to "
        "nltk's RegexpTokenizer (regex engine, Unicode \\w) in every script; regex-lower: the same on "
        "text.lower(); 13a: rules of "
        "WMT's mteval-v13a script, case-sensitive; whitespace: str.split().",
        choices=tuple(WORD_TOKENIZERS),
    )


def tokenizer_label(params: Mapping[str, Any]) -> str:
    return TOKENIZER_LABELS.get(str(params.get("tokenizer")), str(params.get("tokenizer")))


def row_inputs(row: Datum) -> str | None:
    """The reason a prediction-versus-references row cannot be scored, or None."""
    if row.prediction is None:
        return NO_PREDICTION
    if not row.references:
        return NO_REFERENCES
    if type(row.prediction) is not str:
        return f"the prediction is not text but {type(row.prediction).__name__}"
    for reference in row.references:
        if type(reference) is not str:
            return f"a reference is not text but {type(reference).__name__}"
    return None


def texts(values: Sequence[Any]) -> bool:
    """True when every value is a str (contexts, references)."""
    return all(type(v) is str for v in values)


_new_object = object.__new__
_set_value, _set_details, _set_reason = Cell.value.__set__, Cell.details.__set__, Cell.reason.__set__  # type: ignore[attr-defined]


def scored(value: float, details: Mapping[str, Any]) -> Cell:
    """``Cell(value, details)`` in a third of the time, through the frozen dataclass's slots.

    Its generated __init__ sets each field through object.__setattr__ (0.7 us a cell); ROUGE and
    BLEU build four cells a row, a tenth of their whole cost. tests/metrics/lexical/test_lexical_engine.py checks
    that the cells are equal to Cell's own and that Cell has no other field and no __post_init__.
    """
    cell = _new_object(Cell)
    _set_value(cell, value)
    _set_details(cell, details)
    _set_reason(cell, None)
    return cell


def unscored(names: Sequence[str], reason: str) -> dict[str, Cell]:
    cell = Cell.unscored(reason)
    return {name: cell for name in names}


def fmeasure(precision: float, recall: float) -> float:
    """Harmonic mean, evaluated in rouge-score's and SQuAD's order of operations."""
    if precision + recall > 0:
        return 2 * precision * recall / (precision + recall)
    return 0.0
