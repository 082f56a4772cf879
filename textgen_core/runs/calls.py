"""The judge call figures of a run, in one vocabulary: what it plans, what it may cost, what happened.

A run shows three numbers that used to disagree without saying why (an estimate
of 188–422 calls, progress "of 360", 309 made). They count different things, and
:class:`JudgeCalls` keeps them side by side with what each counts:

- **cells**: the judge cells the run plans to score (datum × model × metric, for
  every panel member and sample). The progress bar counts these; it is exact
  before the run starts.
- **estimate**: judge requests still to make for those cells. Its low end
  (``known``) are requests whose prompt is known before the run and that the
  cache does not hold; up to ``dependent`` more are verdicts on items a reply
  extracts (statements, opinions), asked only when the extraction finds some:
  that is why it is a range. Requests the cache holds (``cached``) cost nothing
  and are not calls. One cell may need several requests, and identical requests
  of one datum are asked once, so calls and cells differ.
- **made**: what happened, counted by the client as requests go out: every
  request the endpoint may bill (answered, timed out, or refused with a 5xx or
  429), retries included (``retries`` of them were second attempts or re-asks);
  ``served`` asks were answered from the cache instead (free, not in ``made``).
  ``made`` is what the run record's ``judge_calls`` adds up, and what an
  endpoint counts on its side.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping, Sequence

from ..model import Datum
from ..progress import Progress


@dataclass(frozen=True)
class JudgeCalls:
    """A run's judge cells, its call estimate, and (once it ran) the calls made; see the module's text."""

    cells: int
    known: int
    dependent: int = 0
    cached: int = 0
    made: int | None = None
    retries: int | None = None
    served: int | None = None

    @property
    def low(self) -> int:
        """The fewest requests the cells need (every prompt known up front)."""
        return self.known

    @property
    def high(self) -> int:
        """The most requests the cells need (every extraction finds items to judge)."""
        return self.known + self.dependent

    def after(self, progress: Progress | None, made: int | None = None) -> JudgeCalls:
        """These figures with what a run's last judge progress says happened (``made``: the run's stored total
        of billed requests, when it differs from this session's, e.g. after a resume)."""
        if progress is None:
            return replace(self, made=made)
        return replace(self, made=progress.calls if made is None else made, retries=progress.retries,
                       served=progress.cached)

    def lines(self) -> list[str]:
        """The figures as sentences for a person, each saying what it counts."""
        out = [f"judge cells: {self.cells} to score (the progress counts cells; a cell may take several calls, and "
               "identical requests of a datum are asked once)"]
        if self.dependent:
            out.append(f"judge calls: {self.low} to {self.high} to make, {self.cached} cached ({self.dependent} are "
                       "verdicts on extracted items, skipped when an extraction finds none)")
        else:
            out.append(f"judge calls: {self.known} to make, {self.cached} cached (every prompt is known up front)")
        if self.made is not None:
            out.append(made_text(self.made, self.retries, self.served))
        return out


def made_text(made: int, retries: int | None, served: int | None) -> str:
    """'judge calls made: 309 (12 of them retries or re-asks; 51 asks answered from the cache, not calls)'."""
    extra = [f"{retries} of them retries or re-asks"] if retries else []
    extra += [f"{served} asks answered from the cache, not calls"] if served else []
    return f"judge calls made: {made}" + (f" ({'; '.join(extra)})" if extra else "")


def planned_calls(rows: Sequence[Datum], metrics: Mapping[str, Mapping[str, Any]], judge: Any, store: Any | None,
                  *, jury: Any | None = None) -> JudgeCalls:
    """Cells and the call estimate of a new run judging ``rows`` with ``metrics`` (by every member and sample of
    ``jury``, else by ``judge`` once); ``store``'s judge cache is read, nothing is written or sent."""
    from ..judge.engine import estimate, plan_groups

    planned = [job for group in plan_groups(rows, metrics) for job in group]
    if jury is not None and not jury.plain:
        from .jury import estimate_jury

        found = estimate_jury(rows, metrics, jury, store)
        passes = len(jury.names) * jury.samples
    else:
        found = estimate(rows, metrics, judge if jury is None else jury.lead, store)
        passes = 1
    return JudgeCalls(len(planned) * passes, found.calls - found.dependent, found.dependent, found.cached)

