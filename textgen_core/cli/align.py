"""`textgen-eval align`: make a judge score agree with people's labels, judged on held-out cells, and certify it."""

from __future__ import annotations

import argparse
import math
import textwrap

from ..errors import ParameterError
from .judge_args import add_judge_arguments, judge_settings_for_resume
from .main import add_db_argument, open_store

HELP = ("make a judge score agree with people's labels: candidate edits of its criterion judged on held-out "
        "labelled cells, the best that passes a paired test saved as a new version; and the Alternative "
        "Annotator Test")


def register(sub: argparse._SubParsersAction) -> None:
    # "resolve": --seed here is the split's seed; the judge's sampling seed stays the one the run stored
    p = sub.add_parser("align", help=HELP, description=HELP + ". docs/alignment.md explains each step.",
                       conflict_handler="resolve")
    p.add_argument("run_id", type=int, metavar="RUN", help="the run whose judge score to align")
    p.add_argument("--score", required=True, metavar="NAME", help="a custom judge metric, or a built-in rating "
                                                                   "(copied into an editable criterion first)")
    p.add_argument("--labels-from", type=int, metavar="RUN", help="take the labels of another run of the same "
                                                                  "cells (default: RUN's own)")
    p.add_argument("--holdout", type=float, default=0.3, metavar="SHARE",
                   help="share of the labelled cells held out to judge candidates on (default: %(default)s)")
    p.add_argument("--candidate", action="append", default=[], metavar="FILE",
                   help="your own edit of the criterion, a TOML file like the judge metric files (repeatable)")
    p.add_argument("--epsilon", type=float, default=0.2, help="margin of the Alternative Annotator Test: 0.2 for "
                                                               "crowd or skilled annotators, 0.1 for experts "
                                                               "(default: %(default)s)")
    p.add_argument("--no-accept", action="store_true", help="judge the candidates but save no new version")
    p.add_argument("--dry-run", action="store_true", help="print the split and the judge calls it would make, "
                                                         "and stop")
    add_db_argument(p)
    add_judge_arguments(p)
    p.add_argument("--seed", type=int, default=0, dest="split_seed",
                   help="seed of the split (default: %(default)s); the split of a seed is stored and reused")
    p.set_defaults(handler=_align)


def _align(args: argparse.Namespace) -> int:
    from ..align import align
    from ..judge.metrics.criteria import read_toml

    from ..judge.settings import JURY_SETTINGS

    given = [s.flag for s in JURY_SETTINGS if s.dest and getattr(args, s.dest, None) is not None]
    if given:
        raise ParameterError(f"align asks one judge once per cell: {', '.join(given)} is not used here")
    store = open_store(args)
    judge = judge_settings_for_resume(args, store.get_run(args.run_id).get("judge"))
    if judge is None:
        raise ParameterError("align asks the judge: give --judge-base-url and --judge-model (the run has none)")
    pasted = [(c, path) for path in args.candidate for c in read_toml(path)]
    result = align(store, args.run_id, args.score, judge, labels_from=args.labels_from, holdout=args.holdout,
                   seed=args.split_seed, pasted=pasted, epsilon=args.epsilon, accept_best=not args.no_accept,
                   dry_run=args.dry_run)
    _print(result, args.dry_run)
    return 0


def _print(result, dry_run: bool) -> None:  # noqa: ANN001 - an Alignment
    s = result.setup
    print(f"align {s.score} of run {s.run_id} with the labels of run {s.labels_run}: {len(s.cells)} labelled cells, "
          f"split with seed {s.seed} into {len(s.train)} training and {len(s.held_out)} held-out cells (stratified "
          f"by the people's value; the split is stored and reused)")
    if s.copied_from:
        print(f"{s.copied_from} is a built-in metric: its words are copied into the editable criterion "
              f"{s.base.name}; candidates edit the copy, and the current version is the built-in as the run scored it")
    for note in s.notes:
        print(f"note: {note}")
    print(f"judge calls: {result.estimate.text()}")
    _certify(result)
    if dry_run:
        return
    for why in result.dropped:
        print(f"no candidate: {why}")
    for j in result.judged:
        c = j.candidate
        if c.criterion.examples and c.kind in ("few-shot", "both"):
            print(f"candidate {c.kind}: {len(c.criterion.examples)} worked examples from training disagreements")
        else:
            print(f"candidate {c.kind}")
        if c.prompt and c.kind == "rewrite":
            print("  the reflective call's prompt:")
            print(textwrap.indent(c.prompt, "    | "))
            print(f"  its criterion: {' '.join(c.criterion.criteria.split())}")
    if result.current is None:
        return
    print(f"held-out agreement ({result.current.n} cells with a current value; 95% bootstrap intervals; a "
          f"candidate is accepted when better and its paired test says so):")
    print(f"  {'current':<12} {result.current.text()}")
    for j in result.judged:
        t = j.test
        delta = "n/a" if math.isnan(t.delta) else f"{t.delta:+.3f} {t.interval.text(3)}"
        print(f"  {j.candidate.kind:<12} {j.agreement.text()}; difference {delta}; "
              f"{'ACCEPTED' if j.accepted else 'not accepted'}: {j.why}")
        if j.unscored:
            print(f"  {'':<12} {len(j.unscored)} held-out cells unscored (not counted), e.g. "
                  f"{next(iter(j.unscored.values()))}")
    if result.saved_version is not None:
        print(f"accepted: {result.chosen.candidate.kind}, saved as {s.base.name} version {result.saved_version} "
              f"(alignment {result.alignment_id} keeps its provenance)")
    elif result.chosen is not None:
        print(f"best candidate: {result.chosen.candidate.kind} (not saved: --no-accept)")
    else:
        print("no candidate accepted: the current version stays")
    print(f"judge calls made: {result.calls}")
    if len(result.certification) > 1:
        _certify(result, start=1)


def _certify(result, start: int = 0) -> None:  # noqa: ANN001 - an Alignment
    for what, test in result.certification[start:start + 1] if start == 0 else result.certification[start:]:
        print(f"Alternative Annotator Test ({what}; epsilon {test.epsilon:g}, alpha {test.alpha:g}, "
              f"Benjamini-Yekutieli): {test.verdict()}")
        if test.why:
            continue
        print(f"  {test.annotators} annotators on {test.shared_cells} shared cells; match: {test.measure}")
        for r in test.results:
            print(f"  {r.annotator:<16} {r.cells:>4} cells  rho judge {r.rho_judge:.3f}  rho annotator "
                  f"{r.rho_annotator:.3f}  p {r.p:.4f}  adjusted {r.p_adjusted:.4f}  "
                  f"{'rejected' if r.rejected else 'kept'}")
