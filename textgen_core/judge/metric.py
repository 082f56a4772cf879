"""What every judge metric module builds on: the asker it is handed, its outcome, its declaration.

A judge metric is one module under :mod:`textgen_core.judge.metrics` that
defines ``SPEC = declare(...)`` (name, inputs, notes, the row scorer, the steps
it may ask, its empty-prediction rule) and the prompts of its own verdict
step. The engine reads nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Awaitable, Callable, Mapping, Protocol, Sequence

from ..metrics.endpoint import EmptyRule, empty_cell, full_notes
from ..metrics.spec import MetricSpec, Param, fixed_outputs
from ..model import Cell, Datum
from .prompting import Request, keyed

#: One verdict row of a cell: (step, item_index, item, verdict, reason, cache_key).
VerdictRow = tuple[str, int, "str | None", "str | None", "str | None", "str | None"]


class StepFailed(Exception):
    """A step that cannot give a usable result; every cell that needs it is unscored with ``reason``."""

    def __init__(self, reason: str, exchange: dict[str, Any] | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        #: The failed exchange (step, messages, reply...) when a judge call failed, for the exchanges table.
        self.exchange = exchange


@dataclass(frozen=True)
class Answer:
    """A validated reply: its JSON value and the cache key that finds the exchange again."""

    value: Any
    cache_key: str | None
    #: Asked with log-probabilities (``Request.logprobs_field``): the alternatives at that field's value
    #: (:func:`~textgen_core.llm.logprobs.field_alternatives`) or why there are none; None when not asked.
    logprobs: Any = None


class Asker(Protocol):
    """What a metric needs from the engine: asking (each distinct request once), embeddings, log-probabilities."""

    async def ask(self, request: Request) -> Answer: ...
    async def embed(self, texts: list[str]) -> list[list[float]]: ...
    async def prompt_logprobs(self, text: str) -> list[float]: ...


@dataclass
class Outcome:
    cell: Cell
    verdicts: list[VerdictRow] = field(default_factory=list)
    #: Failed exchanges behind an unscored cell (see StepFailed.exchange).
    exchanges: list[dict[str, Any]] = field(default_factory=list)


CellScorer = Callable[[Asker, Datum, Mapping[str, Any]], Awaitable[Outcome]]


def unscored(reason: str) -> Outcome:
    return Outcome(Cell.unscored(reason))


def has_text(text: str | None) -> bool:
    return bool(text and text.strip())


def references(row: Datum) -> list[str]:
    return [r for r in row.references if has_text(r)]


def contexts(row: Datum) -> list[str]:
    return [c for c in row.contexts if has_text(c)]


@dataclass(frozen=True)
class Judged:
    """Verdicts in item order (paired by the item number each names) and the exchange they came from."""

    items: tuple[str, ...]
    labels: tuple[str, ...]
    reasons: tuple[str, ...]
    cache_key: str | None

    def count(self, *wanted: str, weights: Sequence[int] | None = None) -> int:
        """How many items got one of the ``wanted`` labels, each counted ``weights[i]`` times (default once)."""
        counts = weights or (1,) * len(self.labels)
        return sum(n for label, n in zip(self.labels, counts) if label in wanted)

    def rows(self, step: str, start: int = 0) -> list[VerdictRow]:
        return [(step, start + i, item, label, reason, self.cache_key)
                for i, (item, label, reason) in enumerate(zip(self.items, self.labels, self.reasons))]


async def ask_verdicts(ask: Asker, request: Request, items: Sequence[str], field_name: str = "verdicts") -> Judged:
    """Ask ``request`` and pair its verdicts with ``items`` by item number."""
    answer = await ask.ask(request)
    return judged(answer, field_name, items)


def judged(answer: Answer, field_name: str, items: Sequence[str]) -> Judged:
    by_key = keyed(answer.value.get(field_name) if isinstance(answer.value, Mapping) else None, len(items))
    if isinstance(by_key, str):  # the client checks keys before a reply is accepted; a cached reply is re-checked
        raise StepFailed(by_key)
    ordered = [by_key[i] for i in range(1, len(items) + 1)]
    return Judged(tuple(items), tuple(str(v["verdict"]) for v in ordered),
                  tuple(str(v.get("reason", "")) for v in ordered), answer.cache_key)


def best_reference(per_ref: list[dict[str, Any] | None], keys: tuple[str, ...], rows: list[VerdictRow],
                   empty_reason: str) -> Outcome:
    """The best-scoring reference's value and counts; every reference's in details when several.

    ``None`` marks a reference that could not be scored; with none scored the cell is unscored.
    """
    scored = [(i, p) for i, p in enumerate(per_ref) if p is not None]
    if not scored:
        return Outcome(Cell.unscored(empty_reason), rows)
    best_i, best = max(scored, key=lambda ip: ip[1]["value"])
    details: dict[str, Any] = {key: best[key] for key in keys} | {"reference": best_i + 1}
    if len(per_ref) > 1:
        details["per_reference"] = per_ref
    return Outcome(Cell(best["value"], details), rows)


def ref_step(name: str, index: int) -> str:
    """Step label of a per-reference step, 1-based: 'answer_correctness.ref1'."""
    return f"{name}.ref{index + 1}"


# -- the declaration -----------------------------------------------------------------

@dataclass(frozen=True)
class JudgePlan:
    """What the engine needs to score a metric: the row scorer, its steps and its empty-prediction rule."""

    score: CellScorer
    #: Sample requests of every step the metric may ask, in dependency order (versions and prompt hashes).
    steps: tuple[Request, ...] = ()
    empty: EmptyRule = "unscored"
    #: How an input is named when it is missing ("no query" unless renamed here).
    input_names: Mapping[str, str] = field(default_factory=dict)
    #: True for a metric that compares models: the engine adds the datum's other rows to its params.
    peers: bool = False
    #: Where the metric departs from the seed system, each with its reason (set by :func:`declare`).
    departures: tuple[str, ...] = ()

    def prompt_versions(self) -> str:
        """'step/version,...' for the reproducibility signature."""
        return ",".join(r.version for r in self.steps)

    def on_empty(self) -> Cell | None:
        """The cell of an empty prediction, or None when the metric scores it like any other row."""
        return empty_cell(self.empty)



def declare(name: str, label: str, description: str, needs: tuple[str, ...], plan: JudgePlan, notes: str, *,
            direction: str = "higher", value_range: tuple[float, float | None] = (0.0, 1.0),
            group: str = "llm", params: tuple[Param, ...] = (), departures: tuple[str, ...] = (),
            local_when: Any = None, libraries: tuple[str, ...] = ()) -> MetricSpec:
    """A judge metric's one declaration; the notes state the empty-prediction rule, then every departure
    from the seed system (valor-lite), each with its reason."""
    text = full_notes(notes, plan.empty, tuple(departures))
    return MetricSpec(name=name, label=label, group=group, description=description, needs=needs,
                      outputs=fixed_outputs(name), params=params, direction=direction,  # type: ignore[arg-type]
                      value_range=value_range, notes=text, plan=replace(plan, departures=tuple(departures)),
                      local_when=local_when, libraries=libraries)


#: Inputs a judge metric may need besides the prediction, in the order a missing one is reported.
_INPUTS = (("contexts", lambda row: bool(contexts(row))), ("references", lambda row: bool(references(row))),
           ("query", lambda row: has_text(row.query)))


def precheck(spec: MetricSpec, row: Datum) -> Outcome | None:
    """The cell of a row the judge is not asked about, from the declaration alone: a missing input
    ("no contexts", named as the plan names it), or an empty prediction (the declared rule)."""
    for need, present in _INPUTS:
        if need in spec.needs and not present(row):
            return unscored(f"no {spec.plan.input_names.get(need, need)}")
    if "prediction" not in spec.needs or has_text(row.prediction):
        return None
    cell = spec.plan.on_empty()
    return None if cell is None else Outcome(cell)
