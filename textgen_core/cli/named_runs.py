"""`textgen-eval rename`, `tag`, `note` (a run's name, tags and note) and the version views of `datasets`."""

from __future__ import annotations

import argparse
from typing import Any

from .main import add_db_argument, open_store


def register(sub: argparse._SubParsersAction) -> None:
    rename = sub.add_parser("rename", help="name a run (its id still works): 'textgen-eval rename 7 candidate-v2'")
    rename.add_argument("run", help="run id or current name")
    rename.add_argument("name", nargs="?", help="the new name (not a bare number, no ':')")
    rename.add_argument("--clear", action="store_true", help="remove the run's name")
    add_db_argument(rename)
    rename.set_defaults(handler=_rename)

    tag = sub.add_parser("tag", help="add tags to a run (or --remove them); 'textgen-eval runs --tag T' lists them")
    tag.add_argument("run", help="run id or name")
    tag.add_argument("tags", nargs="+", metavar="TAG", help="one word each: letters, digits, - _ . : /")
    tag.add_argument("--remove", action="store_true", help="remove these tags instead")
    add_db_argument(tag)
    tag.set_defaults(handler=_tag)

    note = sub.add_parser("note", help="write a note on a run ('' clears it); 'textgen-eval runs' shows it")
    note.add_argument("run", help="run id or name")
    note.add_argument("text", help="the note")
    add_db_argument(note)
    note.set_defaults(handler=_note)


def _rename(args: argparse.Namespace) -> int:
    from ..errors import ParameterError

    if (args.name is None) == (not args.clear):
        raise ParameterError("give the run a new name, or --clear to remove its name (not both)")
    store = open_store(args)
    run_id = store.run_names.run_id(args.run)
    store.run_names.label_run(run_id, name=args.name, clear_name=args.clear)
    print(f"run {run_id} is now {'unnamed' if args.clear else repr(_labels(store, run_id)['name'])}")
    return 0


def _tag(args: argparse.Namespace) -> int:
    store = open_store(args)
    run_id = store.run_names.run_id(args.run)
    if args.remove:
        store.run_names.label_run(run_id, remove_tags=args.tags)
    else:
        store.run_names.label_run(run_id, add_tags=args.tags)
    tags = _labels(store, run_id)["tags"]
    print(f"run {run_id} tags: {', '.join(tags) or '(none)'}")
    return 0


def _note(args: argparse.Namespace) -> int:
    store = open_store(args)
    run_id = store.run_names.run_id(args.run)
    store.run_names.label_run(run_id, note=args.text)
    print(f"run {run_id}: note {'cleared' if not args.text.strip() else 'saved'}")
    return 0


def _labels(store: Any, run_id: int) -> dict[str, Any]:
    frame = store.run_names.run_labels()
    row = frame[frame["run_id"] == run_id].iloc[0]
    return {"name": row["name"], "tags": list(row["tags"]), "note": row["note"]}


def show_versions(args: argparse.Namespace) -> int:
    """`datasets NAME`: every version of a named dataset, each with what changed since the one before;
    `datasets NAME --diff V1 V2`: the datums added, removed and changed between two versions."""
    from ..catalog import diff_summary, version_table
    from ..formatting import text_table

    store = open_store(args, read_only=True)
    family = store.versions.family(args.name)
    if args.diff:
        old, new = (store.versions.version_id(family, v) for v in args.diff)
        diff = store.versions.version_diff(old, new)
        print(f"{family}: version {args.diff[0]} -> {args.diff[1]}: {diff_summary(diff)}")
        for key in ("added", "removed", "changed"):
            if diff[key]:
                shown = diff[key][:20]
                more = f" ... and {len(diff[key]) - len(shown)} more" if len(diff[key]) > len(shown) else ""
                print(f"  {key}: {', '.join(shown)}{more}")
        return 0
    versions = version_table(store, family)
    shown = versions.assign(content=versions["content_hash"].map(lambda h: (h or "")[:12]))
    shown = shown[["version", "dataset_id", "name", "created_at", "n_rows", "n_datums", "models", "n_runs", "content",
                   "change"]]
    print(text_table(shown.rename(columns={"dataset_id": "dataset", "created_at": "stored", "n_rows": "rows",
                                           "n_datums": "datums", "n_runs": "runs"})))
    return 0
