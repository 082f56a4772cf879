"""A run's failure modes: found from its failing judgements, stored, and read back without grouping again."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..errors import ParameterError
from ..metrics.models.local_models import PACKAGED
from ..registry import direction_of
from ..store import Store
from .grouping import DIMS, JOIN, SAMPLE, group, min_cluster_size
from .names import ctfidf_terms, mode_name
from .rates import holm, paired_counts, rate
from .rules import FailureRule

#: Version of the method; stored with the modes (a change of steps or defaults gets a new one).
METHOD = "failures/1"
#: Fewest failing judgements the grouping needs (HDBSCAN's smallest mode is 5; fewer than 20 give no modes
#: worth reading).
MIN_FAILURES = 20
#: Name of the mode of the judgements that fit no mode.
UNSORTED = "(unsorted: fits no mode)"
#: Examples kept per mode and model when stored modes are read (the most a page or the command shows).
EXAMPLES = 5
_MEMBERS = ["datum_id", "model", "unit", "step", "item_index", "text"]


class TooFewFailures(ParameterError):
    """The run has fewer failing judgements than the grouping needs; nothing was stored."""


@dataclass
class FailureModes:
    """The stored modes of a run: one row per mode, its members, the scored cells they are counted against."""

    run_id: int
    modes: pd.DataFrame
    members: pd.DataFrame
    cells: pd.DataFrame
    params: dict[str, Any] = field(default_factory=dict)
    #: Members with their text to show as examples (the first few of each mode and model); None: ``members``.
    samples: pd.DataFrame | None = None

    def title(self, mode: int) -> str:
        """The name a mode is shown by: the judge's name when one is stored, else its distinctive words."""
        return self.titles().get(int(mode), "")

    def titles(self) -> dict[int, str]:
        """:meth:`title` of every mode, read in one pass (the first row of a mode counts)."""
        judged = self.modes["judge_name"] if "judge_name" in self.modes else [None] * len(self.modes)
        found: dict[int, str] = {}
        for mode, name, judge in zip(self.modes["mode"], self.modes["name"], judged):
            found.setdefault(int(mode), str(judge) if isinstance(judge, str) and judge else str(name))
        return found

    def naming_note(self, mode: int) -> str | None:
        """Why a mode kept its word name although the judge was asked to name it (None: named, or not asked)."""
        notes = (self.params.get("judge_names") or {}).get("notes") or {}
        return notes.get(str(int(mode)))

    @property
    def models(self) -> list[str]:
        return sorted(self.cells["model"].unique().tolist())

    def rates(self, confidence: float = 0.95, by: pd.DataFrame | None = None) -> pd.DataFrame:
        """mode, name, model, failing, cells, rate, low, high, note: each mode's share of each model's scored cells.

        ``by`` (datum_id, model, slice: :meth:`Store.failures.datum_slices`) adds a ``slice`` column: the rates
        within each slice of a metadata column (rows without a value form the slice "(missing)").
        """
        cells, members = self.cells, self.members.drop_duplicates(["mode", "datum_id", "model", "unit"])
        keys = ["model"]
        if by is not None:
            slices = by.assign(slice=by["slice"].fillna("(missing)"))[["datum_id", "model", "slice"]]
            cells = cells.merge(slices, on=["datum_id", "model"], how="left").fillna({"slice": "(missing)"})
            members = members.merge(slices, on=["datum_id", "model"], how="left").fillna({"slice": "(missing)"})
            keys = ["slice", "model"]
        totals = cells.groupby(keys).size()
        hits = members.groupby(["mode", *keys]).size()
        rows = []
        titles = self.titles()
        for mode in self.modes["mode"]:
            name = titles.get(int(mode), "")
            for group in totals.index:
                group = group if isinstance(group, tuple) else (group,)
                k, n = int(hits.get((int(mode), *group), 0)), int(totals[group if len(group) > 1 else group[0]])
                share, low, high, note = rate(k, n, confidence)
                rows.append((int(mode), name, *group, k, n, share, low, high, note))
        return pd.DataFrame(rows, columns=["mode", "name", *keys, "failing", "cells", "rate", "low", "high", "note"])

    def compare(self, baseline: str, candidates: Sequence[str] | None = None, *, alpha: float = 0.05,
                confidence: float = 0.95) -> pd.DataFrame:
        """Per candidate and mode: the paired difference of rates against ``baseline``, its interval, p, and the
        Holm-adjusted p of the family of every (candidate, mode); ``change`` calls out modes new in the candidate
        or gone from it."""
        others = [m for m in (candidates or self.models) if m != baseline]
        unknown = [m for m in [baseline, *others] if m not in self.models]
        if unknown:
            raise ParameterError(f"model(s) {', '.join(unknown)} not in the run's scored cells; models: "
                                 f"{', '.join(self.models)}")
        hits = self.members.loc[self.members["mode"] >= 0, ["mode", "datum_id", "model", "unit"]].drop_duplicates()
        rows = []
        titles = self.titles()
        for candidate in others:
            pair = self.cells[self.cells["model"].isin([baseline, candidate])]
            scored = pair.groupby(["datum_id", "unit"]).size()
            paired = scored[scored == 2].index.to_frame(index=False)  # cells scored for both models
            mine = hits[hits["model"].isin([baseline, candidate])].merge(paired, on=["datum_id", "unit"])
            per = mine.assign(cand=mine["model"] == candidate).groupby(["mode", "datum_id", "unit"])["cand"].agg(
                ["sum", "count"])
            table = pd.DataFrame({"both": per["count"] == 2, "only_c": (per["count"] == 1) & (per["sum"] == 1),
                                  "only_b": (per["count"] == 1) & (per["sum"] == 0)}).groupby(level="mode").sum()
            counts = {int(m): (int(b), int(c), int(o)) for m, b, c, o in
                      zip(table.index, table["both"], table["only_c"], table["only_b"])}
            for mode in self.modes["mode"]:
                if mode < 0:  # the unsorted judgements are not a mode: not tested
                    continue
                name = titles.get(int(mode), "")
                both, only_c, only_b = counts.get(int(mode), (0, 0, 0))
                r = paired_counts(both, only_c, only_b, len(paired), confidence)
                change = ("new in candidate" if both + only_b == 0 and only_c > 0 else
                          "gone in candidate" if both + only_c == 0 and only_b > 0 else "")
                rows.append([candidate, int(mode), name, r.n, r.baseline_rate, r.candidate_rate, r.difference,
                             r.low, r.high, r.p_value, change, r.note])
        frame = pd.DataFrame(rows, columns=["candidate", "mode", "name", "n", "baseline_rate", "candidate_rate",
                                            "difference", "low", "high", "p", "change", "note"])
        frame["p_holm"] = holm(frame["p"].tolist()) if len(frame) else []
        frame["flagged"] = [p is not None and not math.isnan(p) and p < alpha for p in frame["p_holm"]]
        frame.attrs["family"] = int(frame["p"].notna().sum()) if len(frame) else 0
        return frame

    def examples(self, mode: int, k: int = 5) -> pd.DataFrame:
        """Up to ``k`` members of a mode, taken in turn from each model (a stable choice, the same each read)."""
        pool = self.members if self.samples is None else self.samples
        part = pool[pool["mode"] == mode]
        picked = part.groupby("model", sort=True).head(k).sort_values(["datum_id", "model"], kind="stable")
        turns = picked.assign(turn=picked.groupby("model").cumcount()).sort_values(["turn", "model"], kind="stable")
        return turns.head(k).drop(columns="turn").reset_index(drop=True)


def failing_judgements(store: Store, run_id: int, scores: Sequence[str] | None = None,
                       rule: FailureRule = FailureRule()) -> tuple[pd.DataFrame, list[str]]:
    """The run's failing judgements (datum_id, model, unit, step, item_index, text) and the unit names they
    are counted in: judge metrics by verdict, lexical scores by their lowest cells."""
    store.get_run(run_id)  # an unknown run is one clear error
    judged = store.failures.judged_metrics(run_id)
    known = store.summary(run_id)
    run_scores = sorted(set(known["score"]) | set(known["metric"]))
    if scores:
        missing = [s for s in scores if s not in run_scores]
        if missing:
            raise ParameterError(f"run {run_id} has no score {', '.join(map(repr, missing))}; its scores: "
                                 f"{', '.join(run_scores) or 'none'}")
        wanted = list(dict.fromkeys(scores))
    else:
        wanted = judged or sorted(set(known["score"]))
    judge_units = [s for s in wanted if s in judged]
    parts = []
    if judge_units:
        items = store.failures.judged_items(run_id, judge_units)
        keep = [rule.fails(m, v) for m, v in zip(items["metric"], items["verdict"])]
        items = items[keep]
        text = [r if isinstance(r, str) and r.strip() else f"({v}, no reason given)"
                for r, v in zip(items["reason"], items["verdict"])]
        parts.append(pd.DataFrame({"datum_id": items["datum_id"], "model": items["model"], "unit": items["metric"],
                                   "step": items["step"], "item_index": items["item_index"], "text": text}))
    for score in (s for s in wanted if s not in judged):
        parts.append(_lowest(store.failures.scored_predictions(run_id, score), score, direction_of(score), rule))
    found = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=_MEMBERS)
    return found.reset_index(drop=True), wanted


def _lowest(cells: pd.DataFrame, score: str, direction: str, rule: FailureRule) -> pd.DataFrame:
    """Each model's worst ``rule.lowest`` share of cells (ties at the cut included)."""
    out = []
    for _, part in cells.groupby("model", sort=True):
        values = part["value"].to_numpy(dtype=float) * (-1.0 if direction == "lower" else 1.0)
        cut = np.quantile(values, rule.lowest, method="inverted_cdf")
        low = part[values <= cut]
        out.append(pd.DataFrame({"datum_id": low["datum_id"], "model": low["model"], "unit": score, "step": "lowest",
                                 "item_index": 0, "text": [p if isinstance(p, str) and p.strip()
                                                           else "(empty prediction)" for p in low["prediction"]]}))
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame(columns=_MEMBERS)


def find_modes(store: Store, run_id: int, *, scores: Sequence[str] | None = None, rule: FailureRule = FailureRule(),
               seed: int = 0, model: str = PACKAGED, sample: int = SAMPLE, min_size: int | None = None
               ) -> FailureModes:
    """Group the run's failing judgements into named modes, store them (replacing earlier ones), return them.

    Raises :class:`TooFewFailures` when the run has fewer than :data:`MIN_FAILURES` failing judgements.
    """
    if seed < 0:
        raise ParameterError(f"seed must be zero or positive, got {seed}")
    found, units = failing_judgements(store, run_id, scores, rule)
    if len(found) < MIN_FAILURES:
        raise TooFewFailures(
            f"run {run_id} has {len(found)} failing judgement(s) in {', '.join(units) or 'no score'}; grouping "
            f"needs at least {MIN_FAILURES} (unscored cells are not failures); nothing was stored")
    grouped = group(found["text"].tolist(), seed=seed, model=model, sample=sample, min_size=min_size)
    found = found.assign(mode=grouped.labels)
    numbers = sorted(set(grouped.labels.tolist()) - {-1})
    words = ctfidf_terms([" ".join(found.loc[found["mode"] == m, "text"]) for m in numbers])
    modes = [(m, mode_name(w), w, int((found["mode"] == m).sum()), None) for m, w in zip(numbers, words)]
    unsorted = int((found["mode"] == -1).sum())
    if unsorted:
        modes.append((-1, UNSORTED, [], unsorted, None))
    params = {"asked": asked(scores, rule, seed, model, sample, min_size),
              "units": units, "rule": rule.as_params(), "seed": seed, "model": model, "sample": sample,
              "min_size": min_size or min_cluster_size(min(grouped.embedded, sample)),
              "dims": DIMS, "join": JOIN, "failing": len(found), "embedded": grouped.embedded,
              "handed_off": grouped.handed_off, "noise_joined": grouped.noise_joined}
    members = list(found[["mode", *_MEMBERS]].itertuples(index=False, name=None))
    store.failures.write_failure_modes(run_id, METHOD, params, modes, members)
    return stored_modes(store, run_id)


def asked(scores: Sequence[str] | None, rule: FailureRule, seed: int, model: str, sample: int,
          min_size: int | None) -> dict[str, Any]:
    """What a user asked for, as stored: the same request finds the stored modes instead of grouping again."""
    return {"scores": sorted(scores) if scores else None, "rule": rule.as_params(), "seed": seed, "model": model,
            "sample": sample, "min_size": min_size, "method": METHOD}


def modes_for(store: Store, run_id: int, *, scores: Sequence[str] | None = None, rule: FailureRule = FailureRule(),
              seed: int = 0, model: str = PACKAGED, sample: int = SAMPLE, min_size: int | None = None,
              regroup: bool = False) -> tuple[FailureModes, bool]:
    """(modes, True when they were read from the store): the stored modes when they answer the same request,
    else :func:`find_modes` (which needs a writable store)."""
    stored = None if regroup else stored_modes(store, run_id)
    if stored is not None and stored.params.get("asked") == asked(scores, rule, seed, model, sample, min_size):
        return stored, True
    if store.read_only:
        raise ParameterError(f"run {run_id} has no stored failure modes for these settings; grouping them writes "
                             "to the database, which is open read-only")
    return find_modes(store, run_id, scores=scores, rule=rule, seed=seed, model=model, sample=sample,
                      min_size=min_size), False


def stored_modes(store: Store, run_id: int) -> FailureModes | None:
    """The run's stored modes, or None when none are stored (``textgen-eval failures RUN`` finds them)."""
    with store.session():  # one open of the file for the four reads
        modes = store.failures.failure_modes(run_id)
        if modes.empty:
            return None
        params = {"method": modes["method"].iloc[0], **json.loads(modes["params"].iloc[0])}
        cells = store.failures.scored_units(run_id, params["units"])
        members = store.failures.failure_members(run_id, text=False)
        samples = store.failures.failure_examples(run_id, EXAMPLES)
    table = modes[["mode", "name", "words", "size", "judge_name"]].assign(mode=lambda f: f["mode"].astype(int))
    table = pd.concat([table[table["mode"] >= 0], table[table["mode"] < 0]]).reset_index(drop=True)  # unsorted last
    return FailureModes(run_id, table, members, cells, params, samples)
