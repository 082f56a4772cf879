"""Repeated judging and judge panels: a layer above the judge engine.

Each (member, sample) of a :class:`~textgen_core.runs.panel.Jury` is one pass
of the ordinary judge engine, with that member's settings and a client whose
cache keys carry the sample index, into a :class:`VoteSink`: the engine's
finished cells become votes (``votes``), their verdicts and exchanges are kept
under a step naming the member and sample, and their usage is added to the
run. Every trust property of the engine (keyed verdicts, re-ask once,
unscored with a reason, the cache, the spending cap, which counts from the
run's stored calls, so every member and sample) holds for each vote. Then
each cell is written to ``scores`` as the aggregate of its votes:

* ``mean`` (ratings, shares, numbers): the mean of the scored votes; details
  keep ``min``, ``max``, ``sd`` (population) of them.
* ``majority`` (label and yes/no metrics): the label most scored votes gave;
  details keep its ``majority_share``. A tie is unscored, its reason naming
  the tied labels (no label is preferred to another).

Both keep ``votes`` (scored), ``unscored_votes``, per member mean ``by_judge``
and ``unstable`` (the scored votes disagree). Unscored votes are never counted
as 0; a cell with no scored vote is unscored with its votes' reasons.
"""

from __future__ import annotations

import math
import threading
from collections import Counter
from dataclasses import replace
from itertools import groupby
from typing import Any, Mapping, Sequence

from ..judge.metrics.criteria.known import definition
from .panel import Jury
from ..judge.settings import JudgeSettings
from ..model import Datum
from ..progress import Progress, ProgressCallback
from ..store import CellRecord, Store
from ..store.judge_writer import StoreWriter, writer_for


class VoteSink:
    """The judge's store for one (member, sample) pass: reads go to the store, finished cells become votes."""

    def __init__(self, store: Store, judge: str, sample: int) -> None:
        self.store, self.judge, self.sample = store, judge, sample

    @property
    def judge_writer(self) -> StoreWriter:
        """The store's judge write queue, committing this pass's cells as votes (through the method below)."""
        return writer_for(self)

    def write_judge_batch(self, entries: Sequence[Any], cells: Sequence[Any],
                          usage: Sequence[tuple[int, tuple[int, int, int, float | None]]] = ()) -> None:
        self.store.write_vote_batch(entries, self.judge, self.sample, cells,
                                    [vote_label(w.cell[2], w.cell[5]) for w in cells], usage)

    def judge_unscored_cells(self, run_id: int) -> set[tuple[str, str, str]]:
        """This member's and sample's unscored votes: judged again, their old items replaced."""
        return self.store.vote_cells(run_id, self.judge, self.sample, scored=False)

    def __getattr__(self, name: str) -> Any:
        if name in _PASSED:
            return getattr(self.store, name)
        raise AttributeError(f"a vote sink serves the judge store interface only, not {name!r}")


#: What a vote sink hands to the store as it is: the reply cache, the run's record, the batch log
#: (judge/storage.py JudgeStore and judge/batch.py BatchLog, less the queue and the unscored cells it serves
#: itself: its queue commits through its own write_judge_batch, which makes votes of cells).
_PASSED = frozenset({"session", "judge_cache_entries", "judge_cache_values", "judge_cache_maybe",
                     "judge_cache_surely_missing", "judge_cache_holds", "get_run", "judge_batch_add",
                     "judge_batch_status", "judge_batches"})


def vote_label(metric: str, details: Mapping[str, Any] | None) -> str | None:
    """The label of a label or yes/no metric's vote (what a majority counts); None for a number."""
    criterion = definition(metric)
    if criterion is None or criterion.output.type == "rating" or not details:
        return None
    found = details.get(criterion.output.field)
    return None if found is None else str(found)


def default_aggregate(metric: str) -> str:
    """``majority`` for label and yes/no metrics, ``mean`` for the rest."""
    criterion = definition(metric)
    return "majority" if criterion is not None and criterion.output.type != "rating" else "mean"


def member_settings(jury: Jury) -> list[JudgeSettings]:
    """Each member's settings under the lead's spending caps: the cap is the run's, over every vote."""
    lead = jury.lead
    out = []
    for member in jury.members:
        priced = member.price_prompt_per_million is not None or member.price_completion_per_million is not None
        out.append(replace(member, max_calls=lead.max_calls, max_cost=lead.max_cost if priced else None))
    return out


def run_jury(store: Store, run_id: int, rows: Sequence[Datum], metrics: Mapping[str, Mapping[str, Any]],
             jury: Jury, *, progress: ProgressCallback | None = None, cancel: threading.Event | None = None,
             models: Sequence[str] | None = None) -> list[str]:
    """Judge every cell of ``rows`` x ``metrics`` by every member, ``jury.samples`` times, then write each cell
    as its votes' aggregate. Returns the endpoints' refusals for good (as the engine does)."""
    from ..judge.client import JudgeClient
    from ..judge.engine import run_judge_metrics

    passes = [(name, settings, sample) for name, settings in zip(jury.names, member_settings(jury))
              for sample in range(jury.samples)]
    per_pass = len(rows) * len(metrics)
    refused: list[str] = []
    whole = None if progress is None else _Passes(progress, per_pass * len(passes))
    try:
        for number, (name, settings, sample) in enumerate(passes):
            if cancel is not None and cancel.is_set():
                break
            sink = VoteSink(store, name, sample)
            client = JudgeClient(settings, sink, sample=jury.sample_key(sample))
            refused += run_judge_metrics(
                sink, run_id, rows, metrics, settings, cancel=cancel, client=client, models=models,  # type: ignore[arg-type]
                skip=store.vote_cells(run_id, name, sample, scored=True),
                progress=None if whole is None else whole.part(number * per_pass))
    finally:  # what was judged is scored, also when the run stops (a resume judges the votes left)
        write_aggregates(store, run_id, rows, metrics, jury)
    return list(dict.fromkeys(refused))


class _Passes:
    """The judge progress of every pass (member x sample) as one run's: cells offset by the passes before, and
    the counts of requests (calls, retries, cache hits, tokens) added up over the passes, each pass having its
    own client."""

    _SUMMED = ("calls", "retries", "unanswered", "cached", "rate_limited", "prompt_tokens", "completion_tokens")

    def __init__(self, progress: ProgressCallback, total: int) -> None:
        self.progress, self.total = progress, total
        self.before = {name: 0 for name in self._SUMMED}  # of the passes that ended
        self.current: Progress | None = None

    def part(self, cells_before: int) -> ProgressCallback:
        if self.current is not None:  # the previous pass ended: its counts join the ones before
            for name in self._SUMMED:
                self.before[name] += getattr(self.current, name)
            self.current = None

        def report(p: Progress) -> None:
            if p.phase != "judge":
                self.progress(p)
                return
            self.current = p
            self.progress(replace(p, total=self.total, done=cells_before + p.done,
                                  **{name: self.before[name] + getattr(p, name) for name in self._SUMMED}))
        return report


def write_aggregates(store: Store, run_id: int, rows: Sequence[Datum], metrics: Mapping[str, Mapping[str, Any]],
                     jury: Jury) -> int:
    """Write the cells of ``rows`` x ``metrics`` that have a vote of every member and sample (scored or not),
    each as its votes' aggregate. A cell a stop left with fewer votes is not written: it is not a cell of this
    panel yet, and a resume judges the votes it lacks."""
    wanted = {(r.datum_id, r.model) for r in rows}
    expected = len(jury.members) * jury.samples
    votes = store.votes_for_run(run_id)  # ordered by datum, model, score, judge, sample
    if votes.empty:
        return 0
    columns = [votes[c].tolist() for c in ("datum_id", "model", "metric", "score", "judge", "sample", "value",
                                           "reason", "label")]
    rules = {m: jury.aggregate or default_aggregate(m) for m in metrics}
    cells: list[CellRecord] = []
    for (datum_id, model, metric, score), group in groupby(zip(*columns), key=lambda v: v[:4]):
        if metric not in rules or (datum_id, model) not in wanted:
            continue
        group = [v[4:] for v in group]
        if len(group) < expected:
            continue
        cells.append((datum_id, model, metric, score, *aggregate(group, rules[metric])))
    return store.write_cells(run_id, cells)


#: One vote as :func:`aggregate` reads it: (judge, sample, value or None/NaN, reason, label).
Vote = tuple[str, int, Any, Any, Any]


def aggregate(votes: Sequence[Vote], rule: str) -> tuple[float | None, dict[str, Any], str | None]:
    """One cell from its votes: (value, details, reason). Unscored votes (no value) are counted, never averaged."""
    scored = [v for v in votes if _given(v[2])]
    values = [float(v[2]) for v in scored]
    by_judge: dict[str, list[float]] = {}
    for v in scored:
        by_judge.setdefault(str(v[0]), []).append(float(v[2]))
    details: dict[str, Any] = {"aggregate": rule, "votes": len(values), "unscored_votes": len(votes) - len(values),
                               "by_judge": {j: math.fsum(x) / len(x) for j, x in sorted(by_judge.items())}}
    if not values:
        reasons = [f"{v[0]} sample {v[1]}: {v[3]}" for v in votes]
        return None, details, "no scored vote (" + "; ".join(reasons) + ")"
    if rule == "majority":
        keys = [v[4] if isinstance(v[4], str) else _number(float(v[2])) for v in scored]
        counts = Counter(keys).most_common()
        top, n = counts[0]
        details |= {"labels": dict(counts), "majority_share": n / len(keys), "unstable": len(counts) > 1}
        tied = [k for k, c in counts if c == n]
        if len(tied) > 1:
            return None, details, f"the votes tie: {', '.join(f'{k} {n}' for k in tied)}"
        return values[keys.index(top)], details | {"label": top}, None
    mean = math.fsum(values) / len(values)
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / len(values))
    details |= {"min": min(values), "max": max(values), "sd": sd, "unstable": max(values) > min(values)}
    return mean, details, None


def _given(value: Any) -> bool:
    return value is not None and value == value  # NULL reads as None or NaN


def _number(value: float) -> str:
    return f"{value:g}"


def estimate_jury(rows: Sequence[Datum], metrics: Mapping[str, Mapping[str, Any]], jury: Jury,
                  store: Store | None) -> Any:
    """What a panel or repeated run would cost: the engine's estimate for every member and sample, summed
    (each sample has its own cache keys, so a sample cached before is counted as cached)."""
    from ..judge.client import JudgeClient
    from ..judge.engine import Estimate, estimate

    parts = [estimate(rows, metrics, settings, store, client=JudgeClient(settings, store,
                                                                         sample=jury.sample_key(sample)))
             for settings in member_settings(jury) for sample in range(jury.samples)]
    costs = [p.cost for p in parts if p.cost is not None]
    return Estimate(sum(p.calls for p in parts), sum(p.cached for p in parts), sum(p.prompt_tokens for p in parts),
                    sum(p.completion_tokens for p in parts), math.fsum(costs) if costs else None,
                    sum(p.dependent for p in parts), sum(p.completion_bound for p in parts),
                    next((p.first for p in parts if p.first is not None), None))
