"""One model of one run against one model of another run (``RUN:MODEL``), per score: the in-run comparison's
statistics on datums paired across the two runs.

Datums pair by id. When the runs scored different versions of a dataset, an id whose query or references changed
is another question: it is left out of both sides and counted (``left_out``). The statistics are those of
:func:`.comparison.compare_pairs`, with the same seeded streams, Holm family and verdict rule, so two models of one
run give exactly the numbers ``compare RUN`` gives them.

Scores made under different settings (metric parameters, prompt versions, the judge and its settings: each
score's reproducibility signature) are not comparable: refused with the difference named, unless
``allow_different`` is set, and then every affected row carries the difference.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ..errors import ParameterError
from ..store import Store
from .comparison import COLUMNS, NAN, adjust_and_decide, apart_rows_last, compare_pairs, score_direction
from .pairing import Pairs, RunScores, load_run_scores
from .stats import rng_for
from .verdicts import APART, HOLM, worst_value

COUNTS = ("scored", "unscored", "empty", "missing")


class DifferentSettings(ParameterError):
    """The two runs scored some scores under different settings; ``differences`` names them per score."""

    def __init__(self, differences: Mapping[str, str]) -> None:
        self.differences = dict(differences)
        listed = "; ".join(f"{name}: {text}" for name, text in self.differences.items())
        super().__init__(f"the two runs scored differently, so their numbers are not comparable: {listed}. "
                         "Pass --allow-different-judges to compare anyway (the difference is printed beside "
                         "every affected row)")


@dataclass(frozen=True)
class Side:
    """A model of a run: what ``RUN:MODEL`` names (RUN: an id or a run's name)."""

    run_id: int
    model: str

    @property
    def label(self) -> str:
        return f"{self.run_id}:{self.model}"


def parse_side(store: Store, text: str) -> Side:
    """``RUN:MODEL`` (the first ':' splits; a model name may hold more) as a :class:`Side`."""
    run, sep, model = str(text).partition(":")
    if not sep or not run.strip() or not model.strip():
        raise ParameterError(f"expected RUN:MODEL (a run id or name, a colon, a model), got {text!r}")
    return Side(store.run_names.run_id(run.strip()), model.strip())


def compare_across(store: Store, baseline: Side, candidate: Side, *, scores: Sequence[str] | None = None,
                   resamples: int = 2000, seed: int = 0, tie_tolerance: float = 1e-9, holm: bool = True,
                   confidence: float = 0.95, directions: Mapping[str, str] | None = None,
                   allow_different: bool = False) -> pd.DataFrame:
    """One row per score both sides have: the columns of :func:`.comparison.compare_models`, plus ``left_out``
    (datums whose content changed between the runs' dataset versions) and ``difference`` (how the two scores'
    signatures differ; empty when they agree). ``attrs`` as in compare_models, plus the two sides' runs."""
    if baseline == candidate:
        raise ParameterError(f"baseline and candidate are both {baseline.label}: choose two different ones")
    sides = [load_run_scores(store, side.run_id, scores=scores) for side in (baseline, candidate)]
    for side, data in zip((baseline, candidate), sides):
        data.check_model(side.model)
    names = _shared_scores(sides, baseline, candidate, scores)
    differences = _differences(store, sides, names)
    refused = {name: text for name, text in differences.items() if text}
    if refused and not allow_different:
        raise DifferentSettings(refused)
    left_out, pairs_of = _pairing(store, sides, baseline, candidate, names)
    direction = {name: score_direction(name, directions) for name in names}
    in_family = [name for name in names if direction[name] != "none"]
    family = len(in_family) if holm else 1
    counts = [_counts(store, side) for side in (baseline, candidate)]
    rows = []
    for name in names:
        row = compare_pairs(pairs_of[name], score=name, direction=direction[name],
                            rng=rng_for(seed, baseline.model, candidate.model, name), resamples=resamples,
                            tie_tolerance=tie_tolerance, confidence=confidence,
                            family=family if name in in_family else 1, worst=_worst(sides, name, direction[name]))
        fields = asdict(row) | {"family": HOLM if name in in_family else APART}
        for role, found in zip(("baseline", "candidate"), counts):
            fields.update({f"{kind}_{role}": found.get((role_model(role, baseline, candidate), name), {}).get(kind, 0)
                           for kind in COUNTS})
        rows.append({"baseline": baseline.label, "candidate": candidate.label, **fields,
                     "left_out": left_out, "difference": differences[name]})
    frame = pd.DataFrame(rows, columns=[*COLUMNS, "left_out", "difference"])
    frame = apart_rows_last(frame)
    alpha = 1.0 - confidence
    adjust_and_decide(frame, holm, alpha)
    frame.attrs.update(baseline=baseline.label, candidates=[candidate.label], scores=names, seed=seed,
                       resamples=resamples, confidence=confidence, alpha=alpha, holm=holm, family=family,
                       runs=(baseline.run_id, candidate.run_id), left_out=left_out,
                       allowed_differences=sorted(refused))
    return frame


def role_model(role: str, baseline: Side, candidate: Side) -> str:
    return baseline.model if role == "baseline" else candidate.model


def _shared_scores(sides: list[RunScores], baseline: Side, candidate: Side, asked: Sequence[str] | None) -> list[str]:
    have = [{score for model, score in data.scored if model == side.model}
            for data, side in zip(sides, (baseline, candidate))]
    if asked:
        for found, side in zip(have, (baseline, candidate)):
            lacking = [s for s in asked if s not in found]
            if lacking:
                raise ParameterError(f"{side.label} has no scored values of {', '.join(map(repr, lacking))}; "
                                     f"its scores: {', '.join(sorted(found)) or 'none'}")
        return list(dict.fromkeys(asked))
    shared = sorted(have[0] & have[1])
    if not shared:
        raise ParameterError(f"{baseline.label} and {candidate.label} share no scored score "
                             f"({', '.join(sorted(have[0])) or 'none'} against {', '.join(sorted(have[1])) or 'none'})")
    return shared


def _differences(store: Store, sides: list[RunScores], names: Sequence[str]) -> dict[str, str]:
    """Per score: how the two runs' signatures of its metric differ ('' when they agree)."""
    metric_of = [{r.score: r.metric for r in store.scored_counts(data.run_id).itertuples()} for data in sides]
    found = {}
    for name in names:
        texts = [str(data.run.get("signatures", {}).get(metric_of[i].get(name, name), ""))
                 for i, data in enumerate(sides)]
        found[name] = signature_difference(*texts)
    return found


def signature_difference(first: str, second: str) -> str:
    """'judge: a -> b; temperature: 0 -> 0.7' for the fields of two signatures that differ ('' when equal)."""
    if first == second:
        return ""
    fields = [dict(part.split(":", 1) if ":" in part else ("metric", part) for part in text.split("|"))
              for text in (first, second)]
    keys = list(dict.fromkeys([*fields[0], *fields[1]]))
    return "; ".join(f"{key}: {fields[0].get(key, '(none)')} -> {fields[1].get(key, '(none)')}"
                     for key in keys if fields[0].get(key) != fields[1].get(key))


def _pairing(store: Store, sides: list[RunScores], baseline: Side, candidate: Side,
             names: Sequence[str]) -> tuple[int, dict[str, Pairs]]:
    """(datums left out for changed content, the Pairs of each score) over the baseline's datums in its order, then
    the candidate's others."""
    datasets = [int(data.run["dataset_id"]) for data in sides]
    changed = store.versions.changed_content(*datasets) if datasets[0] != datasets[1] else set()
    out = {}
    for name in names:
        arrays = [data.array_with_ids(name) for data in sides]
        rows = [values[data.models.index(side.model)]
                for (values, _), data, side in zip(arrays, sides, (baseline, candidate))]
        ids = [list(map(str, found)) for _, found in arrays]
        universe = list(dict.fromkeys([*ids[0], *ids[1]]))
        universe = [i for i in universe if i not in changed]
        aligned = []
        for values, own in zip(rows, ids):
            where = {datum: k for k, datum in enumerate(own)}
            aligned.append(np.array([values[where[d]] if d in where else np.nan for d in universe], dtype=float))
        both = ~np.isnan(aligned[0]) & ~np.isnan(aligned[1])
        out[name] = Pairs(datum_ids=[], baseline=aligned[0][both], candidate=aligned[1][both],
                          missing_baseline=len(universe) - int((~np.isnan(aligned[0])).sum()),
                          missing_candidate=len(universe) - int((~np.isnan(aligned[1])).sum()),
                          baseline_all=aligned[0], candidate_all=aligned[1])
    return len(changed), out


def _counts(store: Store, side: Side) -> dict[tuple[str, str], dict[str, int]]:
    return {(r.model, r.score): {"scored": int(r.n_scored), "unscored": int(r.n_unscored), "empty": int(r.n_empty),
                                 "missing": int(r.n_missing)}
            for r in store.score_counts(side.run_id).itertuples() if r.model == side.model}


def _worst(sides: list[RunScores], score: str, direction: str) -> float:
    """As the in-run comparison: the score's declared worst, or the worst value either run observed."""
    if direction == "none":
        return NAN
    values = np.concatenate([data.array(score).ravel() for data in sides])
    if np.isnan(values).all():
        return NAN
    return worst_value(direction, _declared_range(score), (float(np.nanmin(values)), float(np.nanmax(values))))


def _declared_range(score: str) -> tuple[float | None, float | None]:
    from ..registry import get_metric

    try:
        return get_metric(score).value_range
    except Exception:  # a score no registered metric declares: its range is open
        return None, None
