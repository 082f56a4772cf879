"""`textgen-eval run`, `resume` and `extend`: what is printed once a run ended, and the dry run's estimate."""

from __future__ import annotations

import sys
from typing import Any, Callable

from ..errors import ParameterError, StoreBusy
from ..formatting import duration_text
from ..model import Dataset
from ..store import Store
from .run_plan import RunCommand


def print_report(store: Store, run_id: int, out: str | None, unscored_above: float | None = None,
                 calibrate: list[str] | None = None, judged: Any | None = None) -> int:
    """How the run ended, its summary (and reports), ``out`` written; the exit status: 0 finished, 1 not finished
    or nothing scored, UNSCORED_GATE_FAILED when ``unscored_above`` is passed. ``judged``: the session's last
    judge :class:`~textgen_core.progress.Progress` (its retries and cache hits beside the calls made)."""
    from ..export import write_table
    from ..run_export import wide_export
    from .classification import print_reports
    from .tables import print_summary, unscored_gate

    try:
        run = store.get_run(run_id)
    except StoreBusy as exc:  # the run ended; only its summary cannot be read now
        print(f"run {run_id} ended, but its summary cannot be read now ({exc}); 'textgen-eval runs' shows it later",
              file=sys.stderr)
        return 2
    print(f"run {run_id} on dataset {run['dataset']!r}: {run['status']} in {duration_text(run['duration_s'])}")
    if run["status"] == "interrupted" and run["error"]:  # e.g. a spending cap: say how to go on
        print(f"stopped: {run['error']}; finished cells are kept, 'textgen-eval resume {run_id}' finishes the run "
              "(with a higher cap, or none)")
    if run["judge_calls"]:
        cost = f", cost {run['cost']:.4f}" if run["cost"] is not None else ""
        print(f"judge: {run['judge_calls']} calls, {run['prompt_tokens']} prompt + "
              f"{run['completion_tokens']} completion tokens{cost}")
    if judged is not None:  # what this session's calls were, in the vocabulary of the estimate
        from ..runs.calls import made_text

        print(f"{made_text(judged.calls, judged.retries, judged.cached)} for {judged.total} judge cells"
              + ("" if judged.calls == run["judge_calls"] else f" in this session ({run['judge_calls']} in all)"))
    print_summary(store, run_id, shown_models(store, run_id, run))
    print_rating_fallbacks(store, run_id)
    print_reports(store, run_id)
    if calibrate:
        from .labels import print_run_calibration  # pandas and the agreement code: only when asked

        print_run_calibration(store, run_id, calibrate)
    if out:
        path = write_table(wide_export(store, run_id), out)
        print(f"wrote {path}")
    if run["status"] != "finished":
        return 1
    counts = store.score_counts(run_id)  # counted in SQL: a million-row run's cells are not read back
    cells = int(counts["n_scored"].sum() + counts["n_unscored"].sum())
    if cells and not counts["n_scored"].sum():  # every cell unscored: the run produced nothing (#19.5)
        print(f"error: run {run_id} scored nothing: all {cells} cells are unscored (reasons above)",
              file=sys.stderr)
        return 1
    return unscored_gate(store, run_id, unscored_above) if unscored_above is not None else 0


def print_rating_fallbacks(store: Store, run_id: int) -> None:
    """Cells asked for a weighted rating (``rating=weighted``) that kept the chosen one, counted with why."""
    from ..judge.ratings import UNAVAILABLE

    fallbacks = store.detail_reasons(run_id, UNAVAILABLE)
    if fallbacks.empty:
        return
    counts = store.score_counts(run_id).groupby("score")["n_scored"].sum()
    for score, group in fallbacks.groupby("score", sort=True):
        kept = int(group["n"].sum())
        print(f"{score}: {kept} of {int(counts.get(score, kept))} scored cells keep the chosen rating, not the "
              "weighted one:")
        for row in group.itertuples():
            print(f"  {row.n} x {row.reason}")


def shown_models(store: Store, run_id: int, run: dict) -> list[str] | None:
    """None (all) up to MODELS_SHOWN models; else the best MODELS_SHOWN by the mean of the run's first score
    (:func:`~textgen_core.summary.ranked_models`), announced with how to see the rest."""
    from ..judge.metrics.criteria import restore_run
    from ..summary import MODELS_SHOWN, ranked_models

    models = run["models"]
    if len(models) <= MODELS_SHOWN:
        return None
    restore_run(run)  # a custom judge score ranks in its own direction
    ranked, first = ranked_models(store.scored_counts(run_id), run)
    shown = ranked[:MODELS_SHOWN]
    print(f"{len(models)} models: the summary shows the {len(shown)} best by mean {first}; 'textgen-eval export "
          f"{run_id} --out FILE' writes every model's scores, 'textgen-eval compare {run_id}' compares them")
    return shown


def _probe_time(judge: Any, est: Any) -> None:
    """For a local endpoint, time one real call and say how long the run may take (there time is the cost)."""
    from ..llm.endpoint import is_local
    from ..judge.engine import probe

    if judge.batch or not is_local(judge) or est.first is None:  # a batch takes hours whatever one call takes
        return
    seconds, tokens, failure = probe(judge, est.first)
    if failure is not None:
        print(f"time: the probe call failed after {seconds:.1f} s ({failure}); no time estimate")
        return
    one_slot = est.calls * seconds
    print(f"time: one probe call took {seconds:.1f} s ({tokens} completion tokens): about "
          f"{_duration(one_slot)} for {est.calls} calls on a one-slot server, {_duration(one_slot / judge.concurrency)} "
          f"if it serves --concurrency {judge.concurrency} at once; a reply of --max-tokens {judge.max_tokens} "
          "takes longer")


def _duration(seconds: float) -> str:
    return duration_text(seconds) if seconds >= 1 else f"{seconds:.1f} s"


def print_dry_run(plan: RunCommand, dataset: Dataset, cache: Callable[[], Store]) -> None:
    """Print what the run would do; nothing is written (the judge cache, ``cache()``, is only read)."""
    from ..registry import resolve_params

    metrics, judge, jury, judged = plan.metrics, plan.judge, plan.jury, plan.judged
    rows = [r for r in dataset.rows if not plan.models or r.model in plan.models]
    print(f"{len(rows)} rows, {len(metrics)} metrics ({len(judged)} judged)")
    if not judged:
        print("no judge calls: every chosen metric is computed locally")
        return
    if judge is None:
        raise ParameterError("judge metrics need --judge-base-url and --judge-model (or TEXTGEN_EVAL_JUDGE_* variables)")
    from ..judge.engine import estimate

    resolved = resolve_params(metrics, plan.params)
    store = cache()
    if jury is None:
        est = estimate(rows, {m: resolved[m] for m in judged}, judge, store)
    else:  # every member x sample is asked: the estimate counts every vote
        from ..runs.jury import estimate_jury

        est = estimate_jury(rows, {m: resolved[m] for m in judged}, jury, store)
        print(f"panel: {', '.join(jury.names)} x {jury.samples} sample(s); every vote is a judge request")
    from ..judge.engine import plan_groups
    from ..runs.calls import JudgeCalls

    passes = 1 if jury is None else len(jury.names) * jury.samples
    cells = sum(len(g) for g in plan_groups(rows, {m: resolved[m] for m in judged})) * passes
    for line in JudgeCalls(cells, est.calls - est.dependent, est.dependent, est.cached).lines():
        print(line)
    print(f"estimated tokens: {est.prompt_tokens} prompt + {est.completion_tokens} completion")
    if est.calls:  # a rambling or looping judge writes up to max_tokens every time
        bound = est.bound_cost(judge)
        print(f"at most: {est.completion_bound} completion tokens ({est.calls} calls x --max-tokens "
              f"{judge.max_tokens}){'' if bound is None else f', cost {bound:.6f}'}")
        if plan.probe:
            _probe_time(judge, est)
    if est.cost is None:
        print("estimated cost: unknown (set --price-prompt/--price-completion)")
    elif jury is not None:
        print(f"estimated cost: {est.cost:.6f} (each member at its own prices)")
    else:  # direct and Batch API prices side by side
        direct = judge.price(est.prompt_tokens, est.completion_tokens, batch=False)
        batch = judge.price(est.prompt_tokens, est.completion_tokens, batch=True)
        print(f"estimated cost: direct {direct:.6f}, batch {batch:.6f} (Batch API at {judge.batch_discount:g} of the "
              f"price{'; --batch is on' if judge.batch else '; add --batch to use it'})")
    if judge.batch and est.calls:
        rounds = 2 if est.dependent else 1  # verdicts on extracted items wait for the extraction batch
        print(f"batch mode: {rounds} batch round{'s' if rounds > 1 else ''} expected (one more for replies that "
              "must be asked again or requests that failed)")
