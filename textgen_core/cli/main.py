"""`textgen-eval` entry point: subcommands register themselves from small modules.

Only the module of the command being run is imported: ``textgen-eval --help``
lists every command from :data:`COMMANDS` without importing any of them (a
command's module may import pandas, scipy or the judge client), so a script or CI
job calling the CLI does not pay for what it does not use. A test holds
:data:`COMMANDS` to the help each module registers, and ``--help`` to importing
nothing heavy (tests/cli/test_startup.py).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from importlib import import_module
from typing import TYPE_CHECKING, Sequence

from .. import stops
from ..errors import TextgenError

if TYPE_CHECKING:
    from ..store import Store

#: Modules under textgen_core.cli that define `register(subparsers)`.
SUBCOMMAND_MODULES = ("sample", "run", "runs", "named_runs", "over_time", "summary", "compare", "labels", "align",
                      "metrics", "report", "failures", "dashboard")
#: command -> (the module that registers it, its one-line help for ``textgen-eval --help``). A command missing here
#: still runs (its module is imported with all the others), only more slowly.
COMMANDS: dict[str, tuple[str, str]] = {
    "sample": ("sample", "write the bundled sample dataset (QA, two models, human ratings) to a file"),
    "run": ("run", "score a data file (or a stored dataset) and store the run"),
    "resume": ("run", "finish an interrupted run; finished cells are kept"),
    "extend": ("run", "add metrics to a finished run (its dataset, its judge; the judge cache makes repeated asks "
                      "free); 'resume' finishes a stopped extend"),
    "runs": ("runs", "list runs (with their names, tags and dataset versions)"),
    "datasets": ("runs", "list stored datasets; with NAME, its versions"),
    "rename": ("named_runs", "name a run (its id still works): 'textgen-eval rename 7 candidate-v2'"),
    "tag": ("named_runs", "add tags to a run (or --remove them); 'textgen-eval runs --tag T' lists them"),
    "note": ("named_runs", "write a note on a run ('' clears it); 'textgen-eval runs' shows it"),
    "history": ("over_time", "every run of a dataset (all its versions) over time: means with intervals, and changes"),
    "leaderboard": ("over_time", "every model run on a dataset, ranked on a score with rank intervals"),
    "export": ("runs", "export a run's scores (and verdicts) to CSV, JSONL or Parquet"),
    "delete-run": ("runs", "delete a run with its cells and verdicts (its dataset stays)"),
    "summary": ("summary", "print a stored run's summary: means with intervals, why cells are unscored, warnings, "
                           "and a judge panel's agreement"),
    "compare": ("compare", "compare models on a run: paired deltas, bootstrap intervals, p-values"),
    "agreement": ("compare", "agreement of each score with a human label or score column"),
    "labels": ("labels", "human labels of a run: import, export, plan how many are needed"),
    "align": ("align", "make a judge score agree with people's labels: candidate edits of its criterion judged on "
                       "held-out labelled cells, the best that passes a paired test saved as a new version; and the "
                       "Alternative Annotator Test"),
    "metrics": ("metrics", "list metrics with their inputs, parameters and direction, and the judge metrics saved "
                           "in the database"),
    "report": ("report", "write one self-contained HTML file (or JSON) of a run: what was run, means with intervals, "
                         "comparisons, the judge's reliability, and the rows with their verdicts"),
    "failures": ("failures", "group a run's failing judgements into named failure modes, with each model's rate and "
                             "a paired comparison between models (stored; a second call reads them)"),
    "dashboard": ("dashboard", "open the dashboard in a browser"),
}
DEFAULT_DB = os.environ.get("TEXTGEN_EVAL_DB", "textgen_eval.duckdb")


def add_db_argument(parser: argparse.ArgumentParser) -> None:
    """`--db` is accepted before or after the subcommand."""
    parser.add_argument("--db", default=argparse.SUPPRESS, help="DuckDB file (default: $TEXTGEN_EVAL_DB or textgen_eval.duckdb)")


def build_parser(command: str | None = None, *, lazy: bool = False) -> argparse.ArgumentParser:
    """The parser of every command; ``lazy``: only ``command``'s module is imported, the other commands are
    listed by name and help (enough to parse ``command`` and to print ``--help``)."""
    parser = argparse.ArgumentParser(
        prog="textgen-eval", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Evaluate LLM text generation: lexical and judge metrics, runs kept in a DuckDB file.",
        epilog="first steps:\n"
               "  textgen-eval sample --out outputs.csv          write the bundled sample to a file\n"
               "  textgen-eval run outputs.csv --metrics rouge   score it (run 1); 'textgen-eval metrics' lists metrics\n"
               "  textgen-eval dashboard                         serve the dashboard on 127.0.0.1:8501 (Ctrl-C stops it)\n"
               "'textgen-eval COMMAND --help' describes each command.")
    parser.add_argument("--db", default=DEFAULT_DB, help="DuckDB file (default: %(default)s, or $TEXTGEN_EVAL_DB)")
    sub = parser.add_subparsers(dest="command", required=True)
    listed = {module for module, _ in COMMANDS.values()}
    if not lazy or (command is not None and command not in COMMANDS):  # an unlisted command: every module
        modules = SUBCOMMAND_MODULES
    else:
        modules = tuple(m for m in SUBCOMMAND_MODULES if m not in listed or command and m == COMMANDS[command][0])
    for name in modules:
        import_module(f".{name}", __package__).register(sub)
    for name, (_, text) in COMMANDS.items():
        if name not in sub.choices:  # listed for --help; never parsed (its own module registers it when it runs)
            sub.add_parser(name, help=text, add_help=False)
    return parser


def command_of(argv: Sequence[str]) -> str | None:
    """The subcommand named in ``argv`` (the first word that is not ``--db`` or its value), or None."""
    words = iter(argv)
    for word in words:
        if word == "--db":
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def open_store(args: argparse.Namespace, *, read_only: bool = False) -> Store:
    """The store of ``--db``; waiting for a file another program holds is announced on stderr.

    Read-only commands open the file read-only, so they run beside other readers and
    never create a database.
    """
    from ..store import Store

    def tell(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    return Store(args.db, read_only=read_only, on_wait=tell)


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(command_of(argv), lazy=True)
    args = parser.parse_args(argv)
    in_main_thread = threading.current_thread() is threading.main_thread()  # signal handlers live there only
    previous = stops.install() if in_main_thread else {}
    try:
        return int(args.handler(args) or 0)
    except TextgenError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (`textgen-eval runs | head`): stop quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt as exc:
        print("interrupted; finished cells are kept ('textgen-eval runs' lists the run, 'textgen-eval resume "
              "RUN_ID' finishes it)", file=sys.stderr)
        return 128 + (signal.SIGTERM if isinstance(exc, stops.Terminated) else signal.SIGINT)
    finally:
        stops.restore(previous)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
