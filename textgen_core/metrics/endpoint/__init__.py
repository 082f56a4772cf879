"""Metrics scored by an OpenAI-compatible endpoint that are not judge verdicts: embeddings, log-probabilities.

An endpoint metric is a pure plan (:class:`EndpointPlan`): which request a row needs (or its cell at once,
when no request is needed) and a function from the reply to the cell. The judge engine executes the plan
with its client, cache and limits; this package imports nothing of the judge.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping

from ...model import Cell, Datum
from ..spec import MetricSpec, Param, fixed_outputs


@dataclass(frozen=True)
class Embeddings:
    """Ask for the embedding vector of each text; the reply is the vectors, in order."""

    texts: tuple[str, ...]


@dataclass(frozen=True)
class PromptLogprobs:
    """Ask for the log-probabilities of the tokens of ``text`` after the first; the reply is that list."""

    text: str


#: What an empty or whitespace-only prediction gets: a natural worst value, "unscored", or "n/a"
#: for metrics that do not read the prediction.
EmptyRule = float | Literal["unscored", "n/a"]
EMPTY_PREDICTION = "empty prediction"
#: Heads the departures in a metric's notes; ``textgen-eval metrics NAME`` lists them under it.
DEPARTS = "Departs from the seed system:"
_FAILURE = ("A judge call that still fails after retries (HTTP error, invalid JSON, a verdict list with a "
            "missing, repeated or unknown item number after one re-ask, a reply cut off, a content filter) "
            "leaves the cell unscored with that reason; it is never counted as 0.")


def empty_cell(rule: EmptyRule) -> Cell | None:
    """The cell of an empty prediction, or None when the metric scores it like any other row."""
    if rule == "n/a":
        return None
    if rule == "unscored":
        return Cell.unscored(EMPTY_PREDICTION)
    return Cell(float(rule), {"empty_prediction": True})


def full_notes(notes: str, rule: EmptyRule, departures: tuple[str, ...]) -> str:
    """A remote metric's notes: its own, then its empty-prediction rule, the failure rule and its departures."""
    if rule == "n/a":
        empty = ""
    elif rule == "unscored":
        empty = 'Empty prediction: unscored ("empty prediction"), never a best value.'
    else:
        empty = f"Empty prediction: {rule:g} (its natural worst value), without a judge call."
    listed = " ".join(f"({i}) {d}" for i, d in enumerate(departures, start=1))
    return " ".join(t for t in (notes, empty, _FAILURE, f"{DEPARTS} {listed}" if departures else "") if t)


@dataclass(frozen=True)
class EndpointPlan:
    """The request a row needs and how its reply becomes the row's cell.

    ``request(row, params)`` returns an :class:`Embeddings` or :class:`PromptLogprobs` request, or the
    cell itself when no request is needed (or none can help). ``score(row, params, reply)`` turns the
    reply into the cell. A failed request unscores the cell with its reason (the executor's concern).
    """

    request: Callable[[Datum, Mapping[str, Any]], "Embeddings | PromptLogprobs | Cell"]
    score: Callable[[Datum, Mapping[str, Any], Any], Cell]
    empty: EmptyRule = "unscored"
    #: The fields every plan the judge engine runs has: no prompt steps, no peers, no renamed inputs.
    steps: tuple = ()
    peers: bool = False
    input_names: Mapping[str, str] = field(default_factory=dict)
    departures: tuple[str, ...] = ()

    def prompt_versions(self) -> str:
        return ""

    def on_empty(self) -> Cell | None:
        return empty_cell(self.empty)


def declare(name: str, label: str, description: str, needs: tuple[str, ...], plan: EndpointPlan, notes: str, *,
            direction: str = "higher", value_range: tuple[float, float | None] = (0.0, 1.0),
            params: tuple[Param, ...] = (), local_when: Any = None,
            libraries: tuple[str, ...] = ()) -> MetricSpec:
    """An endpoint metric's one declaration (group "endpoint")."""
    return MetricSpec(name=name, label=label, group="endpoint", description=description, needs=needs,
                      outputs=fixed_outputs(name), params=params, direction=direction,  # type: ignore[arg-type]
                      value_range=value_range, notes=full_notes(notes, plan.empty, ()), plan=plan,
                      local_when=local_when, libraries=libraries)


def references(row: Datum) -> list[str]:
    """The row's references that hold text."""
    return [r for r in row.references if r and r.strip()]
