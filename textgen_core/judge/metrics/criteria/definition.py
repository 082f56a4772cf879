"""A custom judge metric as data: what the analyst writes, checked once, with one canonical text.

A definition names the metric, states the criterion in plain words (and
optional evaluation steps), lists the inputs the judge is shown (query,
prediction, references, contexts, or any metadata column) and the output the
judge gives: a rating on a scale with a sentence per level, one of a set of
labels (some of which pass), or yes/no. It comes from a TOML file, a dict, or
this dataclass; every problem is one :class:`~textgen_core.errors.ParameterError`
naming the key.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import tomllib
import unicodedata
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Literal, Mapping

from ....errors import ParameterError
from ....small_file import read_small_file

#: Row fields a definition can show the judge; any other input names a metadata column.
FIELDS = ("query", "prediction", "references", "contexts")
OutputType = Literal["rating", "labels", "yes_no"]
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,47}$")
_KEYS = {"name", "title", "criteria", "steps", "inputs", "output", "direction", "examples"}
_EXAMPLE_KEYS = {"inputs", "verdict", "note"}
#: Worked examples a definition may carry at most (each is shown in every request's prompt).
MAX_EXAMPLES = 12
_OUTPUT_KEYS = {"rating": {"type", "min", "max", "levels"}, "labels": {"type", "labels", "pass"},
                "yes_no": {"type", "pass"}}


@dataclass(frozen=True)
class Output:
    """What the judge returns: a rating from ``min`` to ``max``, one of ``labels``, or yes/no."""

    type: OutputType
    min: int = 1
    max: int = 5
    #: Rating: one sentence per level, lowest first (``max - min + 1`` of them, or none).
    levels: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    #: Labels (or "yes"/"no") that count as 1; the others count as 0.
    passing: tuple[str, ...] = ()

    @property
    def field(self) -> str:
        """The reply field holding the verdict."""
        return {"rating": "score", "labels": "label", "yes_no": "verdict"}[self.type]

    @property
    def choices(self) -> tuple[Any, ...]:
        if self.type == "rating":
            return tuple(range(self.min, self.max + 1))
        return self.labels if self.type == "labels" else ("yes", "no")

    def value(self, verdict: Any) -> float:
        """The cell value of a verdict: the rating itself, or 1 for a passing label and 0 otherwise."""
        if self.type == "rating":
            return float(verdict)
        return 1.0 if unicodedata.normalize("NFC", str(verdict)) in self.passing else 0.0

    def worst(self) -> Any:
        """The verdict with the lowest value (for estimates)."""
        if self.type == "rating":
            return self.min
        return next((c for c in self.choices if c not in self.passing), self.choices[0])


@dataclass(frozen=True)
class Example:
    """A worked example shown to the judge: some of the definition's inputs, the verdict people gave, and why."""

    inputs: tuple[tuple[str, str], ...]
    verdict: Any
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"inputs": dict(self.inputs), "verdict": self.verdict}
        return out | ({"note": self.note} if self.note else {})


@dataclass(frozen=True)
class Criterion:
    """One custom judge metric, as the analyst defined it."""

    name: str
    title: str
    criteria: str
    output: Output
    steps: tuple[str, ...] = ()
    inputs: tuple[str, ...] = ("prediction",)
    direction: Literal["higher", "lower"] = "higher"
    #: Worked examples (people's verdicts on other data), shown fenced in the prompt; none by default.
    examples: tuple[Example, ...] = ()
    #: Where it came from ('rubric.toml', 'saved version 3', 'Python'), for messages only.
    source: str = field(default="", compare=False)

    @property
    def metadata_columns(self) -> tuple[str, ...]:
        return tuple(i for i in self.inputs if i not in FIELDS)

    def as_dict(self) -> dict[str, Any]:
        """The definition as plain data, in the TOML file's keys (what is stored and hashed)."""
        out = asdict(self.output)
        output: dict[str, Any] = {"type": out["type"]}
        if self.output.type == "rating":
            output |= {"min": out["min"], "max": out["max"], "levels": list(out["levels"])}
        elif self.output.type == "labels":
            output |= {"labels": list(out["labels"]), "pass": list(out["passing"])}
        else:
            output |= {"pass": list(out["passing"])}
        made = {"name": self.name, "title": self.title, "criteria": self.criteria, "steps": list(self.steps),
                "inputs": list(self.inputs), "output": output, "direction": self.direction}
        # only when present: a definition without examples keeps the text (and prompt version) it always had
        return made | ({"examples": [e.as_dict() for e in self.examples]} if self.examples else {})

    def text(self) -> str:
        """Canonical JSON of the definition: equal texts mean equal definitions."""
        return self._canonical[0]

    def digest(self) -> str:
        return self._canonical[1]

    @cached_property
    def _canonical(self) -> tuple[str, str]:
        """(text, digest), made once per definition: every judge request of the metric names its version, and
        rebuilding the text cost about 1 ms a request (the definition is frozen, so it cannot go stale)."""
        text = json.dumps(self.as_dict(), sort_keys=True, ensure_ascii=False)
        return text, hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]

    def changes(self, other: "Criterion") -> list[str]:
        """The keys whose values differ from ``other``'s, as 'key: old -> new'."""
        mine, theirs = self.as_dict(), other.as_dict()
        return [f"{key}: {json.dumps(theirs.get(key), ensure_ascii=False)} -> "
                f"{json.dumps(mine.get(key), ensure_ascii=False)}"
                for key in sorted(set(mine) | set(theirs)) if mine.get(key) != theirs.get(key)]


def _fail(where: str, key: str, problem: str) -> ParameterError:
    return ParameterError(f"judge metric definition{f' in {where}' if where else ''}: key {key!r} {problem}")


def _text(raw: Mapping[str, Any], key: str, where: str, *, required: bool = True, default: str = "") -> str:
    value = raw.get(key, None)
    if value is None:
        if required:
            raise _fail(where, key, "is missing")
        return default
    if not isinstance(value, str) or not value.strip():
        raise _fail(where, key, f"must be non-empty text, got {json.dumps(value, default=str)[:60]}")
    return " ".join(value.split()) if key != "criteria" else value.strip()


def _texts(raw: Mapping[str, Any], key: str, where: str, default: tuple[str, ...] = ()) -> tuple[str, ...]:
    value = raw.get(key, None)
    if value is None:
        return default
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise _fail(where, key, f"must be a list of texts, got {json.dumps(value, default=str)[:60]}")
    bad = [i for i, item in enumerate(value, start=1) if not isinstance(item, str) or not item.strip()]
    if bad:
        raise _fail(where, key, f"item {bad[0]} must be non-empty text")
    return tuple(" ".join(item.split()) for item in value)


def _whole(raw: Mapping[str, Any], key: str, where: str, default: int) -> int:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or value != int(value):
        raise _fail(where, f"output.{key}", f"must be a whole number, got {json.dumps(value, default=str)[:40]}")
    return int(value)


def _output(raw: Any, where: str) -> Output:
    if not isinstance(raw, Mapping):
        raise _fail(where, "output", "must be a table with a 'type' (rating, labels or yes_no)")
    kind = raw.get("type")
    if kind not in _OUTPUT_KEYS:
        raise _fail(where, "output.type", f"must be rating, labels or yes_no, got {json.dumps(kind, default=str)}")
    unknown = sorted(set(raw) - _OUTPUT_KEYS[kind])
    if unknown:
        raise _fail(where, f"output.{unknown[0]}", f"is not a key of a {kind} output "
                                                   f"(allowed: {', '.join(sorted(_OUTPUT_KEYS[kind]))})")
    if kind == "rating":
        low, high = _whole(raw, "min", where, 1), _whole(raw, "max", where, 5)
        if not (0 <= low < high <= 100):
            raise _fail(where, "output.max", f"must be above output.min and a scale of at most 0 to 100 "
                                             f"(got {low} to {high})")
        levels = _levels(raw.get("levels"), low, high, where)
        return Output("rating", low, high, levels)
    if kind == "labels":
        labels = tuple(unicodedata.normalize("NFC", label) for label in _texts(raw, "labels", where))
        if len(labels) < 2 or len(set(labels)) != len(labels):
            raise _fail(where, "output.labels", "must list at least two different labels")
        folded: dict[str, str] = {}
        for label in labels:
            twin = folded.setdefault(label.casefold(), label)
            if twin != label:
                raise _fail(where, "output.labels", f"{twin!r} and {label!r} differ only in case: a judge's reply "
                                                    "cannot tell them apart; keep one")
        passing = tuple(unicodedata.normalize("NFC", label) for label in _texts(raw, "pass", where))
        wrong = [p for p in passing if p not in labels]
        if not passing or wrong:
            raise _fail(where, "output.pass", f"must name some of the labels {list(labels)}"
                                              + (f"; {wrong[0]!r} is not one" if wrong else ""))
        return Output("labels", labels=labels, passing=passing)
    passing = _texts(raw, "pass", where, ("yes",))
    if passing not in (("yes",), ("no",)):
        raise _fail(where, "output.pass", 'must be ["yes"] or ["no"]')
    return Output("yes_no", labels=("yes", "no"), passing=passing)


def _levels(raw: Any, low: int, high: int, where: str) -> tuple[str, ...]:
    """A sentence per level: a list (lowest first) or a table keyed by level ('1' = '...'); none (absent, an
    empty list or table) is a scale without level sentences."""
    if raw is None or (isinstance(raw, (list, tuple, Mapping)) and not raw):
        return ()
    if isinstance(raw, Mapping):
        keys = {str(k).strip(): v for k, v in raw.items()}
        expected = [str(n) for n in range(low, high + 1)]
        if sorted(keys, key=lambda k: (len(k), k)) != expected:
            raise _fail(where, "output.levels", f"must describe every level {low} to {high} exactly once")
        raw = [keys[k] for k in expected]
    levels = _texts({"levels": raw}, "levels", where)
    if len(levels) != high - low + 1:
        raise _fail(where, "output.levels", f"must have one sentence per level, {high - low + 1}, got {len(levels)}")
    return levels


def _examples(raw: Any, inputs: tuple[str, ...], output: Output, where: str) -> tuple[Example, ...]:
    """Worked examples: a list of tables, each with ``inputs`` (some of the definition's inputs, as text),
    ``verdict`` (a rating, label or yes/no of the output) and an optional ``note``."""
    if raw is None:
        return ()
    if isinstance(raw, (str, Mapping)) or not isinstance(raw, (list, tuple)):
        raise _fail(where, "examples", "must be a list of tables (inputs, verdict, note)")
    if len(raw) > MAX_EXAMPLES:
        raise _fail(where, "examples", f"holds {len(raw)} examples; at most {MAX_EXAMPLES} fit in a prompt")
    made = []
    for i, item in enumerate(raw, start=1):
        key = f"examples[{i}]"
        if not isinstance(item, Mapping):
            raise _fail(where, key, "must be a table with inputs, verdict and an optional note")
        unknown = sorted(set(item) - _EXAMPLE_KEYS)
        if unknown:
            raise _fail(where, f"{key}.{unknown[0]}", "is not a key of an example (allowed: inputs, note, verdict)")
        shown = item.get("inputs")
        if not isinstance(shown, Mapping) or not shown:
            raise _fail(where, f"{key}.inputs", "must be a table of the definition's inputs and their text")
        for name, text in shown.items():
            if name not in inputs:
                raise _fail(where, f"{key}.inputs.{name}", f"is not an input of the definition ({', '.join(inputs)})")
            if not isinstance(text, str):
                raise _fail(where, f"{key}.inputs.{name}", "must be text")
        verdict = _example_verdict(item.get("verdict"), output, where, key)
        note = item.get("note", "")
        if not isinstance(note, str):
            raise _fail(where, f"{key}.note", "must be text")
        made.append(Example(tuple((str(n), t) for n, t in shown.items()), verdict, " ".join(note.split())))
    return tuple(made)


def _example_verdict(value: Any, output: Output, where: str, key: str) -> Any:
    if output.type == "rating":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value \
                or value not in output.choices:
            raise _fail(where, f"{key}.verdict", f"must be a whole rating from {output.min} to {output.max}, "
                                                 f"got {json.dumps(value, default=str)[:40]}")
        return int(value)
    text = unicodedata.normalize("NFC", value) if isinstance(value, str) else value
    if text not in output.choices:
        raise _fail(where, f"{key}.verdict", f"must be one of {list(output.choices)}, "
                                             f"got {json.dumps(value, default=str)[:40]}")
    return text


def criterion(raw: "Mapping[str, Any] | Criterion", where: str = "") -> Criterion:
    """A checked definition from a dict (a TOML file's tables, a stored definition) or a Criterion."""
    if isinstance(raw, Criterion):
        return criterion(raw.as_dict(), where or raw.source)
    if not isinstance(raw, Mapping):
        raise ParameterError(f"a judge metric definition must be a table of keys, got {type(raw).__name__}")
    unknown = sorted(set(raw) - _KEYS)
    if unknown:
        raise _fail(where, unknown[0], f"is not a definition key (allowed: {', '.join(sorted(_KEYS))})")
    name = _text(raw, "name", where)
    if not _NAME.match(name):
        raise _fail(where, "name", f"must be lower-case letters, digits and '_', starting with a letter: {name!r}")
    inputs = _texts(raw, "inputs", where, ("prediction",))
    if not inputs or len(set(inputs)) != len(inputs):
        raise _fail(where, "inputs", "must list each input once (query, prediction, references, contexts or a "
                                     "metadata column)")
    direction = raw.get("direction", "higher")
    if direction not in ("higher", "lower"):
        raise _fail(where, "direction", f"must be higher or lower, got {json.dumps(direction, default=str)}")
    output = _output(raw.get("output"), where)
    return Criterion(name=name, title=_text(raw, "title", where, required=False, default=name),
                     criteria=_text(raw, "criteria", where), output=output,
                     steps=_texts(raw, "steps", where), inputs=inputs, direction=direction,
                     examples=_examples(raw.get("examples"), inputs, output, where), source=where)


def read_toml(path: str | Path) -> list[Criterion]:
    """Every definition in a TOML file: one at the top level, or several as ``[[metric]]`` tables."""
    label = str(path)
    try:
        data = tomllib.loads(read_small_file(path, "judge metric file").decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ParameterError(f"judge metric file {label}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ParameterError(f"judge metric file {label}: not valid TOML ({exc})") from None
    tables = data.get("metric") if set(data) == {"metric"} else [data]
    if not isinstance(tables, list) or not tables:
        raise ParameterError(f"judge metric file {label}: key 'metric' must be a list of [[metric]] tables")
    found = [criterion(t, label if len(tables) == 1 else f"{label} [[metric]] {i}")
             for i, t in enumerate(tables, start=1)]
    names = [c.name for c in found]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ParameterError(f"judge metric file {label}: key 'name' {twice[0]!r} is defined twice")
    return found

