"""One alignment, end to end: propose candidates from the training cells, judge them on the held-out cells,
accept the best one that passes the paired test, and certify the judge with the Alternative Annotator Test.

:func:`align` does it all (the command line accepts at once); the dashboard calls :func:`align` with
``accept=False`` and :func:`accept` when the analyst clicks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..compare.stats import rng_for
from ..judge.client import Unscored
from ..judge.metrics.criteria import Criterion
from ..judge.settings import JudgeSettings
from ..store import Store
from .aat import EPSILON, AltTest, alt_test
from .candidates import Candidate, both, few_shot, from_rewrite, prompt_text, rewrite_request, yours
from .heldout import Agreement, PairedTest, agreement, codes, draws_for, paired, verdict
from .judging import CallEstimate, ask_once, estimate, judge_rows, make_client
from .setup import Key, Setup, prepare, rows_of


@dataclass(frozen=True)
class Judgement:
    """A candidate on the held-out cells: its agreement, the paired test against the current version."""

    candidate: Candidate
    agreement: Agreement
    test: PairedTest
    accepted: bool
    why: str
    unscored: dict[Key, str]


@dataclass
class Alignment:
    setup: Setup
    estimate: CallEstimate
    current: Agreement | None = None
    judged: list[Judgement] = field(default_factory=list)
    #: Candidates that could not be made (the rewrite's reply unusable...), with the reason.
    dropped: list[str] = field(default_factory=list)
    best: int | None = None
    calls: int = 0
    certification: list[tuple[str, AltTest]] = field(default_factory=list)
    saved_version: int | None = None
    alignment_id: int | None = None

    @property
    def chosen(self) -> Judgement | None:
        return None if self.best is None else self.judged[self.best]


def _codes(setup: Setup, values: Sequence[float]) -> np.ndarray:
    return codes(values, setup.categories)


def _propose(setup: Setup, client: Any, cap: Any, pasted: Sequence[Candidate], dropped: list[str]) -> list[Candidate]:
    train = [setup.cells[k] for k in setup.train]
    shots = few_shot(setup.base, train)
    if shots is None:
        dropped.append("few-shot, rewrite, both: no training cell where the judge and people disagree")
        return list(pasted)
    found = [shots]
    req = rewrite_request(setup.base, train)
    reply = ask_once(client, cap, req)
    if isinstance(reply, Unscored):
        dropped.append(f"rewrite, both: the reflective call gave no usable reply ({reply.reason})")
    else:
        try:
            rewrite = from_rewrite(setup.base, reply, prompt_text(req))
        except Exception as exc:  # noqa: BLE001 - a ParameterError naming what the rewrite lacks
            dropped.append(f"rewrite, both: {exc}")
        else:
            found += [rewrite, both(rewrite, shots)]
    return found + list(pasted)


def _unique(found: list[Candidate], base: Criterion, dropped: list[str]) -> list[Candidate]:
    seen = {base.text()}
    kept = []
    for c in found:
        if c.criterion.text() in seen:
            dropped.append(f"{c.kind}: the same definition as the current version or an earlier candidate")
            continue
        seen.add(c.criterion.text())
        kept.append(c)
    return kept


def plan_calls(setup: Setup, settings: JudgeSettings, store: Store, pasted: Sequence[Candidate] = ()) -> CallEstimate:
    """The calls an alignment would make, before any is made."""
    with store.session():  # the cache lookups of the estimate: one open of the file, no judge call
        return _plan_calls(setup, settings, store, pasted)


def _plan_calls(setup: Setup, settings: JudgeSettings, store: Store, pasted: Sequence[Candidate]) -> CallEstimate:
    client, _ = make_client(settings, store)
    train = [setup.cells[k] for k in setup.train]
    held = rows_of(setup, setup.held_out)
    shots = few_shot(setup.base, train)
    known = [c.criterion for c in pasted] + ([shots.criterion] if shots else [])
    req = rewrite_request(setup.base, train) if shots else None
    unknown = 0
    if req is not None:
        key = client.cache_key(list(req.messages), req.schema, prompt_version=req.version)
        reply = client.cached_values([key]).get(key)
        if reply is None:
            unknown = 2 * len(held)
        else:
            try:
                rewrite = from_rewrite(setup.base, reply, "")
                known += [rewrite.criterion, both(rewrite, shots).criterion]
            except Exception:  # noqa: BLE001 - an unusable cached rewrite makes no calls
                pass
    return estimate(client, known, held, [req] if req is not None else [], unknown)


def align(store: Store, run_id: int, score: str, judge: JudgeSettings, *, labels_from: int | None = None,
          holdout: float = 0.3, seed: int = 0, pasted: Sequence[Any] = (), epsilon: float = EPSILON,
          accept_best: bool = True, dry_run: bool = False) -> Alignment:
    """Align the judge of ``score`` in run ``run_id`` with people's labels (see the module's docstring).

    ``pasted``: the analyst's own candidate definitions (dicts or Criterion, with where they came from as
    ``(raw, where)`` pairs). ``dry_run``: only the setup and the estimate."""
    setup = prepare(store, run_id, score, labels_from=labels_from, holdout=holdout, seed=seed)
    own = [yours(setup.base, raw, where) for raw, where in pasted]
    planned = plan_calls(setup, judge, store, own)
    result = Alignment(setup, planned)
    result.certification.append(("current version, every labelled cell",
                                 alt_test(setup.labels, setup.current, categorical=setup.categorical, epsilon=epsilon)))
    if dry_run:
        return result
    client, cap = make_client(judge, store)
    before = client.usage.calls
    found = _unique(_propose(setup, client, cap, own, result.dropped), setup.base, result.dropped)
    held = [k for k in setup.held_out if k in setup.current]
    people = _codes(setup, [setup.cells[k].people for k in held])
    now = _codes(setup, [setup.current[k] for k in held])
    result.current = agreement(people, now, len(setup.categories), setup.weighted,
                               draws_for(len(held), rng_for(seed, "align", score, "current")))
    for c in found:
        judged = judge_rows(client, cap, c.criterion, rows_of(setup, setup.held_out))
        scored = [k for k in held if k in judged.values]
        p = _codes(setup, [setup.cells[k].people for k in scored])
        cur = _codes(setup, [setup.current[k] for k in scored])
        new = _codes(setup, [judged.values[k] for k in scored])
        draws = draws_for(len(scored), rng_for(seed, "align", score, c.kind))
        test = paired(p, cur, new, len(setup.categories), setup.weighted, draws)
        ok, why = verdict(test, len(found))
        result.judged.append(Judgement(c, agreement(p, new, len(setup.categories), setup.weighted, draws), test,
                                       ok, why, judged.unscored))
    result.calls = client.usage.calls - before
    passing = [i for i, j in enumerate(result.judged) if j.accepted]
    if passing:
        result.best = max(passing, key=lambda i: (result.judged[i].test.delta, -i))
        chosen = result.judged[result.best]
        values = judge_rows(client, cap, chosen.candidate.criterion, rows_of(setup, setup.held_out)).values
        result.certification.append((f"{chosen.candidate.kind} candidate, held-out cells",
                                     alt_test(setup.labels, values, categorical=setup.categorical, epsilon=epsilon)))
    if accept_best and result.best is not None:
        accept(store, result, result.best)
    elif not store.read_only:
        result.alignment_id = store.record_alignment(run_id, score, setup.labels_run, seed, setup.holdout,
                                                     setup.base.name, None, provenance(result))
    return result


def accept(store: Store, result: Alignment, index: int) -> int:
    """Save candidate ``index`` as the criterion's next version, with the alignment as its provenance; the version.

    The version the run used is saved first when it is not the latest saved (a copy of a built-in metric is
    saved once, as its first version), so the accepted one follows it."""
    setup, chosen = result.setup, result.judged[index]
    if not chosen.accepted:
        raise ValueError(f"candidate {chosen.candidate.kind} did not pass the paired test: {chosen.why}")
    base = setup.base
    if setup.copied_from is None or store.load_criterion(base.name) is None:
        store.save_criterion(base.name, base.title, base.text())
    made = chosen.candidate.criterion
    version = store.save_criterion(made.name, made.title, made.text())
    result.best, result.saved_version = index, version
    result.alignment_id = store.record_alignment(setup.run_id, setup.score, setup.labels_run, setup.seed,
                                                 setup.holdout, base.name, version, provenance(result))
    return version


def _figure(a: Agreement | None) -> dict[str, Any] | None:
    if a is None:
        return None
    return {"statistic": a.statistic, "value": a.value, "low": a.interval.low if a.interval.given else None,
            "high": a.interval.high if a.interval.given else None, "why": a.interval.why, "mcc": a.mcc, "n": a.n}


def provenance(result: Alignment) -> dict[str, Any]:
    """What an accepted version came from: labels, split, candidates and their figures (stored as JSON)."""
    s = result.setup
    return {"run": s.run_id, "score": s.score, "labels_run": s.labels_run, "seed": s.seed, "holdout": s.holdout,
            "criterion": s.base.name, "copied_from": s.copied_from, "train_cells": len(s.train),
            "held_out_cells": len(s.held_out), "current": _figure(result.current), "calls": result.calls,
            "candidates": [{"kind": j.candidate.kind, "digest": j.candidate.criterion.digest(),
                            "agreement": _figure(j.agreement), "delta": j.test.delta, "p": j.test.p_not_better,
                            "changed": j.test.changed, "accepted": j.accepted, "why": j.why,
                            "unscored": len(j.unscored)} for j in result.judged],
            "dropped": result.dropped,
            "accepted": None if result.chosen is None else result.chosen.candidate.kind,
            "version": result.saved_version}
