"""Run summaries: SQL aggregates, what is missing, and an interval of each mean that stays in range."""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from .compare.intervals import BOOTSTRAP_MAX, TOO_FEW
from .compare.small_sample import mean_interval, moments_interval
from .compare.stats import rng_for
from .judge.metrics.criteria import restore_run
from .registry import direction_of, get_metric
from .store import Store


def score_order(store: Store, run_id: int) -> list[str]:
    """The run's score names in the order its metrics were chosen and declare their outputs."""
    run = store.get_run(run_id)
    restore_run(run)  # custom judge metrics declare their outputs and direction as the run stored them
    order: list[str] = []
    for metric in run["metrics"]:
        try:
            order.extend(get_metric(metric).outputs(run["params"].get(metric, {})))
        except Exception:  # a metric no longer declared still has its stored scores
            continue
    return order


def long_scores(store: Store, run_id: int) -> pd.DataFrame:
    """Every cell with its details, unscored reason and reproducibility signature."""
    signatures = store.get_run(run_id)["signatures"]
    frame = store.scores(run_id)
    frame["signature"] = frame["metric"].map(lambda m: signatures.get(m, ""))
    return frame


def wide_scores(store: Store, run_id: int) -> pd.DataFrame:
    """One row per (datum, model), one numeric column per score, in the run's metric order."""
    return store.wide_scores(run_id, score_order(store, run_id))


def scores_with_texts(store: Store, run_id: int) -> pd.DataFrame:
    """The wide scores with what each row is about, for exports a person reads: datum_id, model, query,
    prediction, references (a list), the dataset's metadata columns, then one column per score.

    The key is ``datum_id``, as in the long scores and the verdicts. A metadata column named like a score
    comes out as ``metadata.<name>``."""
    scores = wide_scores(store, run_id).rename(columns={"id": "datum_id"})
    dataset = store.load_dataset(store.get_run(run_id)["dataset_id"])
    taken = set(scores.columns) | {"query", "prediction", "references"}
    meta = {c: (f"metadata.{c}" if c in taken else c) for c in dataset.metadata_columns}
    texts = pd.DataFrame([{"datum_id": r.datum_id, "model": r.model, "query": r.query, "prediction": r.prediction,
                           "references": list(r.references), **{meta[c]: r.metadata.get(c) for c in meta}}
                          for r in dataset.rows], columns=["datum_id", "model", "query", "prediction", "references",
                                                           *meta.values()])
    merged = scores.merge(texts, on=["datum_id", "model"], how="left")
    score_columns = [c for c in scores.columns if c not in ("datum_id", "model")]
    return merged[["datum_id", "model", "query", "prediction", "references", *meta.values(), *score_columns]]


def run_summary(store: Store, run_id: int, models: Sequence[str] | None = None,
                confidence: float = 0.95) -> pd.DataFrame:
    """Per (model, metric, score): counts, mean, median, std, min, max and an interval of the mean.

    Counts: ``n_scored`` + ``n_unscored`` + ``n_missing`` (datums without a cell)
    is the dataset's datums; ``n_empty`` counts the model's empty predictions.
    The interval (``ci_method``) follows the small-sample rule of
    :mod:`.compare.small_sample`: inside the score's range, never of zero width;
    where it gives none the ends are NaN, ``ci_method`` is 'too few' and
    ``ci_note`` says why ('' otherwise).
    """
    frame = store.summary(run_id, models)
    counts = store.score_counts(run_id)[["model", "score", "n_empty", "n_missing"]]
    frame = frame.merge(counts, on=["model", "score"], how="left")
    frame[["n_empty", "n_missing"]] = frame[["n_empty", "n_missing"]].fillna(0).astype(int)
    # Large groups are summarized from SQL aggregates; only groups small enough to bootstrap fetch their values
    moments = {(m, s): row for m, s, *row in store.score_moments(run_id, models).itertuples(index=False)}
    small = sorted({s for (_m, s), row in moments.items() if row[0] < BOOTSTRAP_MAX})
    values = store.score_values(run_id, models=models, scores=small) if small else None
    groups = {} if values is None else {
        key: part["value"].to_numpy(dtype=float) for key, part in values.groupby(["model", "score"])}
    bounds = {}
    intervals = []
    for model, score in zip(frame["model"], frame["score"]):
        if score not in bounds:
            bounds[score] = _range(score)
        known = moments.get((model, score))
        if known is not None and known[0] >= BOOTSTRAP_MAX:
            n, mean, std, total, binary = known
            intervals.append(moments_interval(int(n), float(mean), float(std), float(total), bool(binary),
                                              confidence=confidence, bounds=bounds[score]))
            continue
        intervals.append(mean_interval(groups.get((model, score), np.empty(0)), confidence=confidence,
                                       rng=rng_for(0, model, score), bounds=bounds[score]))
    frame["ci_low"] = [i.low for i in intervals]
    frame["ci_high"] = [i.high for i in intervals]
    frame["ci_method"] = [i.method for i in intervals]
    frame["ci_note"] = [i.why for i in intervals]
    return frame


#: A summary, a page or a chart shows this many models of a run that has more; the rest are asked for by name.
MODELS_SHOWN = 20


def ranked_models(counts: pd.DataFrame, run: Mapping[str, Any]) -> tuple[list[str], str | None]:
    """The run's models, best first by their mean of the run's first scored score, and that score.

    ``counts``: :meth:`Store.scored_counts` (one SQL pass: model, metric, score, n_scored, mean). The first
    score is the first metric of the run (in the order chosen) with a scored value, its first score; "best"
    follows the score's direction (ties keep the run's order). Models without a scored value of it come
    last, in the run's order. ``run`` is the run's record with its custom metrics restored.
    """
    models = [str(m) for m in run.get("models") or []]
    if counts.empty:
        return models, None
    rank = {name: i for i, name in enumerate(run.get("metrics") or [])}
    first = str(counts.assign(_r=counts["metric"].map(lambda m: rank.get(m, len(rank))))
                .sort_values(["_r", "score"], kind="stable")["score"].iloc[0])
    order = {name: i for i, name in enumerate(models)}
    means = counts[counts["score"] == first]
    means = means.assign(_o=means["model"].map(lambda m: order.get(m, len(order)))).sort_values("_o", kind="stable")
    means = means.sort_values("mean", ascending=direction_of(first) == "lower", na_position="last", kind="stable")
    ranked = [str(m) for m in means["model"]]
    seen = set(ranked)
    return ranked + [m for m in models if m not in seen], first


def _range(score: str) -> tuple[float | None, float | None]:
    try:
        return get_metric(score).value_range
    except Exception:  # a score no metric declares any more still has its stored values
        return None, None


def summary_table(store: Store, run_id: int, models: Sequence[str] | None = None) -> pd.DataFrame:
    """Scores as rows, models (``models``, default all) as columns: 'mean [ci_low, ci_high]
    scored/unscored/empty/missing'; ``attrs['too_few']``: why a cell says 'too few' ('model / score: why')."""
    frame = run_summary(store, run_id, models)
    if frame.empty:
        return pd.DataFrame()
    aggregates = store.aggregates(run_id)
    if models is not None:
        aggregates = aggregates[aggregates["model"].isin(list(models))]

    def cell(row: pd.Series) -> str:
        counts = f"{row['n_scored']}/{row['n_unscored']}/{row['n_empty']}/{row['n_missing']}"
        if row["n_scored"] == 0:
            return f"no mean {counts}"
        interval = TOO_FEW if np.isnan(row["ci_low"]) else f"[{row['ci_low']:.4f}, {row['ci_high']:.4f}]"
        return f"{row['mean']:.4f} {interval} {counts}"

    frame["cell"] = frame.apply(cell, axis=1)
    table = frame.pivot(index="score", columns="model", values="cell")
    present = set(frame["score"])
    order = [s for s in score_order(store, run_id) if s in present]
    table = table.reindex(order + sorted(present - set(order)))
    if not aggregates.empty:
        corpus = aggregates.pivot(index="score", columns="model", values="value")
        corpus.index = [f"{score} (corpus)" for score in corpus.index]
        table = pd.concat([table, corpus.map(lambda v: "" if pd.isna(v) else f"{v:.4f}")])
    table.columns.name = None
    table.attrs["too_few"] = [f"{model} / {score}: {note}" for model, score, note in
                              zip(frame["model"], frame["score"], frame["ci_note"]) if note]
    return table


#: Distinct reasons named in a roll-up line before the rest are counted together.
REASONS_SHOWN = 3
#: A judge score needs this many scored cells of one model before a constant value is called degenerate.
DEGENERATE_MIN = 3
#: Share of one-word (or empty) reasons from which a judge's reasons are called uninformative.
ONE_WORD_SHARE = 0.8


#: A quoted piece of a reply inside a reason ('...' or "..."): it makes each reason unique, not a kind of its own.
_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")


def reason_kind(reason: str) -> str:
    """A reason with the reply text it quotes left out, so that cells unscored for one cause group together
    ("the reply repeated '…' over and over until max_tokens=384"); the cell keeps its full reason."""
    return _QUOTED.sub("'…'", reason)


def unscored_lines(store: Store, run_id: int) -> dict[str, str]:
    """Per score with unscored cells, one line: how many, and why (reasons grouped, most frequent first).

    The pairwise preference's baseline is never compared with itself: its cells
    are named as unscored by design and not counted as failures.
    """
    from .judge.metrics.pairwise_preference import IS_BASELINE

    reasons = store.unscored_reasons(run_id)
    reasons["reason"] = [reason_kind(r) if isinstance(r, str) else r for r in reasons["reason"]]
    lines: dict[str, str] = {}
    for score, part in reasons.groupby("score", sort=False):
        by_design = part[part["reason"] == IS_BASELINE]
        failed = part[part["reason"] != IS_BASELINE].groupby("reason", sort=False)["n"].sum()
        failed = failed.sort_values(ascending=False, kind="stable")
        words = []
        if not failed.empty:
            named = [f"{reason} ({n})" for reason, n in failed.head(REASONS_SHOWN).items()]
            rest = int(failed.iloc[REASONS_SHOWN:].sum())
            kinds = len(failed) - REASONS_SHOWN
            if rest:
                named.append(f"{kinds} other reason{'s' if kinds > 1 else ''} ({rest})")
            words.append(f"{int(failed.sum())} unscored: " + "; ".join(named))
        if not by_design.empty:
            models = ", ".join(sorted(set(by_design["model"])))
            words.append(f"{int(by_design['n'].sum())} cells of the baseline {models} are not scored by design "
                         "(not a failure)")
        lines[str(score)] = "; ".join(words)
    return lines


def scale_text(score: str) -> str:
    """'1-5, higher is better' for a declared score; '' when no metric declares it."""
    try:
        spec = get_metric(score)
    except Exception:  # a score no metric declares any more
        return ""
    low, high = spec.value_range
    span = f"{low:g}-{high:g}" if high is not None else f"{low:g} and up"
    better = {"higher": "higher is better", "lower": "lower is better", "none": "no better direction"}
    return f"{span}, {better.get(spec.direction, spec.direction)}"


def judge_warnings(store: Store, run_id: int) -> list[str]:
    """Warnings about a judge that says nothing: verdicts that never vary, reasons of one word.

    A judge score whose scored cells all hold one value (over every model, from
    :data:`DEGENERATE_MIN` cells) cannot tell a good answer from a bad one; nor
    can a judge whose stated reasons are one word (or none) in at least
    :data:`ONE_WORD_SHARE` of its verdicts. Both deserve a check against people.
    """
    out: list[str] = []
    frame = store.summary(run_id)
    frame = frame[frame["n_scored"] > 0].groupby("score", sort=False).agg(
        n_scored=("n_scored", "sum"), low=("min", "min"), high=("max", "max"), models=("model", "nunique"))
    for row in frame.reset_index().itertuples():
        if not _is_judge(row.score) or row.n_scored < DEGENERATE_MIN or row.low != row.high:
            continue
        models = f"{row.models} models" if row.models > 1 else "1 model"
        out.append(f"{row.score} ({scale_text(row.score)}): every one of the {row.n_scored} scored cells "
                   f"({models}) is {row.low:g}; a judge whose verdicts do not vary cannot tell answers apart - "
                   "check it against people (textgen-eval agreement).")
    for row in store.verdict_reason_words(run_id).itertuples():
        if row.n_reasons >= DEGENERATE_MIN and row.n_one_word >= ONE_WORD_SHARE * row.n_reasons:
            out.append(f"{row.metric}: {row.n_one_word} of the judge's {row.n_reasons} reasons are one word or "
                       "empty; it may be answering without reading (look at its replies in Explore).")
    return out + silent_members(store.votes_for_run(run_id))


def silent_members(votes: pd.DataFrame) -> list[str]:
    """Warnings for the members of a panel none of whose votes is scored: the cells are then the other members'
    votes alone, so the "panel" may in truth be one judge. Empty for a run without a panel."""
    if votes.empty or votes["judge"].nunique() < 2:
        return []
    scored = votes.groupby("judge", sort=True)["value"].count()
    silent = [str(j) for j, n in scored.items() if n == 0]
    speaking = [str(j) for j, n in scored.items() if n > 0]
    out = []
    for member in silent:
        mine = votes[votes["judge"] == member]
        reasons = mine["reason"].dropna().astype(str)
        why = f" (the most common reason: {reasons.mode().iloc[0]!r})" if not reasons.empty else ""
        left = (f"in effect a panel of one judge, {speaking[0]}" if len(speaking) == 1 else
                "no member scored anything" if not speaking else
                f"{len(speaking)} of {len(scored)} members scored")
        out.append(f"panel member {member}: none of its {len(mine)} votes is scored{why}; the cells are the other "
                   f"members' votes alone - {left}. Check its endpoint, model and key.")
    return out


def _is_judge(score: str) -> bool:
    try:
        return get_metric(score).group == "llm"
    except Exception:  # a score no metric declares any more
        return False


def jury_summary(store: Store, run_id: int) -> pd.DataFrame:
    """Per (model, score, judge) of a panel or repeated run: scored and unscored votes and the mean of the scored
    ones (unscored votes are not in it). Empty for a plain run, which has no votes."""
    votes = store.votes_for_run(run_id)
    if votes.empty:
        return pd.DataFrame(columns=["model", "score", "judge", "n_scored", "n_unscored", "mean"])
    grouped = votes.groupby(["model", "score", "judge"], sort=True)["value"]
    table = pd.DataFrame({"n_scored": grouped.count(), "n_unscored": grouped.size() - grouped.count(),
                          "mean": grouped.mean()}).reset_index()
    return table


def unstable_cells(store: Store, run_id: int) -> pd.DataFrame:
    """Per (model, score) judged by votes: how many scored cells are unstable (their scored votes disagree: a
    spread above 0, or labels not unanimous) out of the scored cells. Empty for a plain run."""
    import json

    if not has_jury(store, run_id):  # a plain run has no votes: its cells are not read
        return pd.DataFrame(columns=["model", "score", "unstable", "scored"])
    cells = store.scores(run_id)
    rows = []
    for cell in cells.itertuples():
        details = json.loads(cell.details) if isinstance(cell.details, str) else None
        if not details or "unstable" not in details or cell.value != cell.value:
            continue
        rows.append((cell.model, cell.score, bool(details["unstable"])))
    if not rows:
        return pd.DataFrame(columns=["model", "score", "unstable", "scored"])
    frame = pd.DataFrame(rows, columns=["model", "score", "flag"])
    grouped = frame.groupby(["model", "score"], sort=True)["flag"]
    return pd.DataFrame({"unstable": grouped.sum().astype(int), "scored": grouped.size()}).reset_index()


def has_jury(store: Store, run_id: int) -> bool:
    """True for a run judged several times or by a panel (it stored its jury)."""
    return bool((store.get_run(run_id).get("judge") or {}).get("jury"))


def jury_view(store: Store, run_id: int) -> tuple[list, pd.DataFrame]:
    """A panel's agreement per score (:func:`.compare.jury.panel_report`) and the unstable cells per model and
    score (:func:`unstable_cells`) of a panel or repeated run; ([], empty) for a plain run."""
    from .compare.jury import panel_report

    if not has_jury(store, run_id):
        return [], pd.DataFrame(columns=["model", "score", "unstable", "scored"])
    return panel_report(store, run_id), unstable_cells(store, run_id)
