"""How a user's columns map onto the normalized fields, and a guess from column names."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field, fields
from typing import Any, Literal, Mapping, Sequence

from ..errors import InputError

Format = Literal["long", "wide"]
ListFormat = Literal["auto", "json", "delimiter", "single"]
NullReferences = Literal["keep", "missing"]

FORMATS = ("long", "wide")
LIST_FORMATS = ("auto", "json", "delimiter", "single")
#: What a reference that reads 'NaN', 'None' or 'null' becomes: kept as text (and warned about) or missing.
NULL_REFERENCES = ("keep", "missing")

# Candidate column names per field, best first; compared after _norm().
ID_NAMES = ("id", "datum_id", "qid", "question_id", "uid", "uuid", "ticket", "ticket_id", "example_id", "item_id",
            "sample_id", "record_id", "case_id", "prompt_id", "row_id")
#: Any other ``<something>_id`` / ``<something>id`` column is taken as the datum id when none of ID_NAMES is
#: present, except these, which name who or what made a row rather than the datum.
_ID_SUFFIX = re.compile(r"^[a-z0-9]+(?:_[a-z0-9]+)*_id$")
_NOT_DATUM_IDS = ("model_id", "modelid", "run_id", "user_id", "userid", "annotator_id", "session_id", "system_id")
MODEL_NAMES = ("model", "model_name", "system")
QUERY_NAMES = ("query", "question", "input", "prompt")
PREDICTION_NAMES = ("prediction", "response", "answer", "output", "generated")
REFERENCE_NAMES = ("reference", "references", "ground_truth", "ground_truths", "gold", "target")
CONTEXT_NAMES = ("context", "contexts", "retrieved_contexts")

_REF_NUMBERED = re.compile(r"^(?:reference|references|ref|ground_truth|gold|target)_?(\d+)$")
_CTX_NUMBERED = re.compile(r"^(?:context|contexts|retrieved_context|passage)_?(\d+)$")
# Wide format: prediction_<model>, response_<model>, output_<model>, or <model>_prediction...
_WIDE_WORDS = ("prediction", "response", "output")
_WIDE_PREFIX = re.compile(rf"^(?:{'|'.join(_WIDE_WORDS)})[\s_\-.]+(.+)$", re.IGNORECASE)
_WIDE_SUFFIX = re.compile(rf"^(.+?)[\s_\-.]+(?:{'|'.join(_WIDE_WORDS)})$", re.IGNORECASE)
# "expected_output" or "reference_response" name a reference, not a model.
_NOT_A_MODEL = {"expected", "reference", "ref", "gold", "target", "ground_truth", "correct", "ideal",
                "human", "true", "label", "format", "type", "length", "tokens"}


def _norm(name: str) -> str:
    """Lower case, with spaces, hyphens and dots read as underscores."""
    return re.sub(r"[\s\-.]+", "_", str(name).strip().lower())


@dataclass(frozen=True)
class ColumnMapping:
    """Which input column feeds each normalized field.

    ``None`` (or an empty tuple) leaves a field unmapped. In long format one row
    holds one model's output for one datum; in wide format one row holds a datum
    and ``wide_predictions`` names one prediction column per model.
    """

    id: str | None = None
    model: str | None = None
    query: str | None = None
    prediction: str | None = None
    references: tuple[str, ...] = ()
    contexts: tuple[str, ...] = ()
    format: Format = "long"
    wide_predictions: Mapping[str, str] = field(default_factory=dict)
    list_format: ListFormat = "auto"
    delimiter: str = "||"
    default_model: str = "model"
    max_cell_chars: int = 200_000
    null_references: NullReferences = "keep"
    #: With no id column: rows whose query text is identical are one datum (each model's row of a question),
    #: its id ``q-`` and a hash of the text (:func:`query_datum_id`); without it each row is its own datum.
    pair_by_query: bool = False

    def __post_init__(self) -> None:
        # Accept a bare string or a list where a tuple of columns is expected.
        for name in ("references", "contexts"):
            value = getattr(self, name)
            if value is None:
                value = ()
            elif isinstance(value, str):
                value = (value,) if value else ()
            object.__setattr__(self, name, tuple(str(v) for v in value))
        object.__setattr__(self, "wide_predictions", {str(k): str(v) for k, v in dict(self.wide_predictions or {}).items()})
        if self.format not in FORMATS:
            raise InputError(f"mapping format must be one of {', '.join(FORMATS)}, got {self.format!r}")
        if self.list_format not in LIST_FORMATS:
            raise InputError(f"mapping list_format must be one of {', '.join(LIST_FORMATS)}, got {self.list_format!r}")
        if self.null_references not in NULL_REFERENCES:
            raise InputError(f"mapping null_references must be one of {', '.join(NULL_REFERENCES)}, "
                             f"got {self.null_references!r}")
        if self.list_format == "delimiter" and not self.delimiter:
            raise InputError("mapping delimiter cannot be empty when list_format is 'delimiter'")
        if not str(self.default_model).strip():
            raise InputError("mapping default_model cannot be empty")
        if self.pair_by_query and (self.id or not self.query):
            raise InputError("pairing rows by identical query text needs a mapped query column and no id column "
                             f"(id is {self.id!r}, query is {self.query!r})")
        if isinstance(self.max_cell_chars, bool) or not isinstance(self.max_cell_chars, int) or self.max_cell_chars < 1:
            raise InputError(f"mapping max_cell_chars must be a positive whole number, got {self.max_cell_chars!r}")

    def __hash__(self) -> int:  # wide_predictions is a dict, so hash the plain-data form
        return hash(json.dumps(self.to_dict(), sort_keys=True))

    def columns_used(self) -> list[str]:
        """Every input column this mapping reads, in field order, without repeats."""
        used = [self.id, self.model, self.query, self.prediction, *self.references, *self.contexts]
        if self.format == "wide":
            used.extend(self.wide_predictions.values())
        return list(dict.fromkeys(c for c in used if c))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data; :meth:`from_dict` reads it back."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, tuple):
                value = list(value)
            elif isinstance(value, Mapping):
                value = dict(value)
            out[f.name] = value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ColumnMapping:
        """Build a mapping from :meth:`to_dict` output; unknown keys are an error."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise InputError(f"unknown column-mapping key {', '.join(map(repr, unknown))}; known keys: {', '.join(sorted(known))}")
        return cls(**dict(data))

    def replace(self, **changes: Any) -> ColumnMapping:
        """A copy with some fields changed (explicit overrides on top of a guess)."""
        data = self.to_dict()
        data.update(changes)
        return ColumnMapping.from_dict(data)


def query_datum_id(query: str | None) -> str:
    """The datum id of a row paired by its query text: the same text (after trimming) gives the same id,
    in any chunk of any file."""
    text = "" if query is None else str(query).strip()
    return "q-" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


def _suffixed_id(columns: Sequence[str], taken: set[str]) -> str | None:
    """The first column named like ``ticket_id`` or ``caseId`` (not a model's or a person's id)."""
    for column in columns:
        name = _norm(re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", column))  # caseId -> case_id
        if column not in taken and _ID_SUFFIX.match(name) and name not in _NOT_DATUM_IDS:
            return column
    return None


def _first(by_norm: Mapping[str, str], names: Sequence[str], taken: set[str]) -> str | None:
    for name in names:
        column = by_norm.get(name)
        if column is not None and column not in taken:
            return column
    return None


def _numbered(columns: Sequence[str], pattern: re.Pattern[str], taken: set[str]) -> list[str]:
    hits = []
    for column in columns:
        match = pattern.match(_norm(column))
        if match and column not in taken:
            hits.append((int(match.group(1)), column))
    return [column for _, column in sorted(hits)]


def _wide_columns(columns: Sequence[str], taken: set[str]) -> dict[str, str]:
    """model name -> prediction column, for columns like prediction_<model> or <model>_response."""
    found: dict[str, str] = {}
    for column in columns:
        if column in taken:
            continue
        # Match the stripped original so the model keeps the user's spelling.
        text = str(column).strip()
        match = _WIDE_PREFIX.match(text) or _WIDE_SUFFIX.match(text)
        if not match:
            continue
        model = match.group(1)
        if _norm(model) in _NOT_A_MODEL or model in found:
            continue
        found[model] = column
    return found


def guess_mapping(columns: Sequence[str]) -> ColumnMapping:
    """A best guess from column names alone (case-insensitive); the user can correct it.

    Falls back to wide format when no single prediction column exists but
    columns like ``prediction_<model>`` or ``<model>_response`` do.
    """
    columns = [str(c) for c in columns]
    by_norm: dict[str, str] = {}
    for column in columns:
        by_norm.setdefault(_norm(column), column)
    taken: set[str] = set()

    def pick(names: Sequence[str]) -> str | None:
        column = _first(by_norm, names, taken)
        if column is not None:
            taken.add(column)
        return column

    id_col = pick(ID_NAMES) or _suffixed_id(columns, taken)
    if id_col is not None:
        taken.add(id_col)
    model_col = pick(MODEL_NAMES)
    query_col = pick(QUERY_NAMES)
    prediction_col = pick(PREDICTION_NAMES)
    ref_single = pick(REFERENCE_NAMES)
    ctx_single = pick(CONTEXT_NAMES)
    refs = ([ref_single] if ref_single else []) + _numbered(columns, _REF_NUMBERED, taken)
    taken.update(refs)
    ctxs = ([ctx_single] if ctx_single else []) + _numbered(columns, _CTX_NUMBERED, taken)
    taken.update(ctxs)

    if prediction_col is None and model_col is None:
        wide = _wide_columns(columns, taken)
        if wide:
            return ColumnMapping(id=id_col, query=query_col, references=tuple(refs), contexts=tuple(ctxs),
                                 format="wide", wide_predictions=wide)
    return ColumnMapping(id=id_col, model=model_col, query=query_col, prediction=prediction_col,
                         references=tuple(refs), contexts=tuple(ctxs))
