"""`textgen-eval runs`, `export`, `datasets` and `delete-run`: look at what is stored, or forget a run."""

from __future__ import annotations

import argparse

import pandas as pd

from ..export import write_table
from ..formatting import duration_text, text_table
from .main import add_db_argument, open_store


def register(sub: argparse._SubParsersAction) -> None:
    runs = sub.add_parser("runs", help="list runs (with their names, tags and dataset versions)")
    runs.add_argument("--tag", action="append", default=[], metavar="TAG",
                      help="only runs with this tag (repeatable: runs with every one of them)")
    add_db_argument(runs)
    runs.set_defaults(handler=_runs)

    datasets = sub.add_parser("datasets", help="list stored datasets; with NAME, its versions")
    datasets.add_argument("name", nargs="?", help="a dataset: list its versions and what changed in each")
    datasets.add_argument("--diff", nargs=2, type=int, metavar=("V1", "V2"),
                          help="with NAME: the datums added, removed and changed from version V1 to V2")
    add_db_argument(datasets)
    datasets.set_defaults(handler=_datasets)

    export = sub.add_parser("export", help="export a run's scores (and verdicts) to CSV, JSONL or Parquet")
    export.add_argument("run_id", type=int)
    export.add_argument("--out", required=True, help="output file (.csv, .jsonl, .parquet)")
    export.add_argument("--long", action="store_true", help="one row per score cell, with details and reasons")
    export.add_argument("--verdicts", help="also write the judge's verdicts to this file")
    export.add_argument("--modes", metavar="FILE", help="also write the run's stored failure modes ('textgen-eval "
                                                        "failures'), one row per failing judgement, to this file")
    add_db_argument(export)
    export.set_defaults(handler=_export)

    delete = sub.add_parser("delete-run", help="delete a run with its cells and verdicts (its dataset stays)")
    delete.add_argument("run_id", type=int)
    delete.add_argument("--force", action="store_true",
                        help="delete a run recorded as 'running' even though its program seems alive (a program "
                             "that died and whose process number another program now has)")
    add_db_argument(delete)
    delete.set_defaults(handler=_delete_run)


def _runs(args: argparse.Namespace) -> int:
    store = open_store(args, read_only=True)
    frame = store.list_runs()
    if frame.empty:
        print("no runs yet")
        return 0
    frame = frame.merge(store.run_names.run_labels(), on="run_id", how="left")
    frame = frame.merge(store.versions.versions()[["dataset_id", "family", "version"]], on="dataset_id", how="left")
    if args.tag:
        frame = frame[[set(args.tag) <= set(tags) for tags in frame["tags"]]]
        if frame.empty:
            print(f"no run has the tag{'s' if len(args.tag) > 1 else ''} {', '.join(args.tag)}")
            return 0
    frame["dataset"] = [f"{f} v{int(v)}" if pd.notna(v) else d
                        for d, f, v in zip(frame["dataset"], frame["family"], frame["version"])]
    frame["name"] = frame["name"].fillna("")
    frame["tags"] = frame["tags"].map(lambda tags: ",".join(tags))
    shown = frame[["run_id", "name", "tags", "dataset", "created_at", "status", "metrics", "models", "judge_model",
                   "duration_s", "judge_calls", "cost"]].copy()
    shown["duration_s"] = shown["duration_s"].map(duration_text)
    shown["cost"] = shown["cost"].map(lambda c: "" if pd.isna(c) else f"{c:.4f}")
    shown = shown.rename(columns={"run_id": "run", "created_at": "created", "judge_model": "judge",
                                  "duration_s": "duration", "judge_calls": "judge calls"})
    print(text_table(shown))
    for run_id, note in zip(frame["run_id"], frame["note"]):
        if isinstance(note, str) and note:
            print(f"note on run {run_id}: {note}")
    return 0


def _datasets(args: argparse.Namespace) -> int:
    if args.name is not None:
        from .named_runs import show_versions

        return show_versions(args)
    if args.diff:
        from ..errors import ParameterError

        raise ParameterError("--diff compares two versions of one dataset: 'textgen-eval datasets NAME --diff 1 2'")
    store = open_store(args, read_only=True)
    frame = store.list_datasets()
    if frame.empty:
        print("no datasets yet")
        return 0
    frame = frame.merge(store.versions.versions()[["dataset_id", "family", "version"]], on="dataset_id", how="left")
    shown = frame[["dataset_id", "name", "family", "version", "n_rows", "models", "n_runs", "source"]]
    shown = shown.rename(columns={"dataset_id": "dataset", "family": "versions of", "n_rows": "rows",
                                  "n_runs": "runs"})
    print(text_table(shown))
    return 0


def _export(args: argparse.Namespace) -> int:
    """The run's scores (wide or long), and on request its verdicts and failure modes: every table keyed by
    datum_id and model (textgen_core.run_export)."""
    store = open_store(args, read_only=True)
    store.get_run(args.run_id)  # a clear error for an unknown run
    from ..run_export import long_export, modes_export, wide_export  # pandas and scipy only when exporting

    frame = long_export(store, args.run_id) if args.long else wide_export(store, args.run_id)
    print(f"wrote {write_table(frame, args.out)} ({len(frame)} rows)")
    if args.verdicts:
        verdicts = store.run_verdicts(args.run_id)
        print(f"wrote {write_table(verdicts, args.verdicts)} ({len(verdicts)} verdicts)")
    if args.modes:
        modes = modes_export(store, args.run_id)
        if modes.empty:
            print(f"run {args.run_id} has no stored failure modes: 'textgen-eval failures {args.run_id}' groups "
                  f"them; {args.modes} not written")
        else:
            print(f"wrote {write_table(modes, args.modes)} ({modes['mode'].nunique()} modes, "
                  f"{len(modes)} failing judgements)")
    return 0


def _delete_run(args: argparse.Namespace) -> int:
    store = open_store(args)
    run = store.get_run(args.run_id)  # a clear error for an unknown run
    store.delete_run(args.run_id, force=args.force)
    print(f"deleted run {args.run_id} ({run['status']}, on dataset {run['dataset']!r})")
    return 0
