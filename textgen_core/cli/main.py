"""`textgen-eval` entry point: subcommands register themselves from small modules."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from importlib import import_module
from typing import Sequence

from .. import stops
from ..errors import TextgenError
from ..store import Store

#: Modules under textgen_core.cli that define `register(subparsers)`.
SUBCOMMAND_MODULES = ("sample", "run", "runs", "summary", "compare", "labels", "metrics", "report", "dashboard")
DEFAULT_DB = os.environ.get("TEXTGEN_EVAL_DB", "textgen_eval.duckdb")


def add_db_argument(parser: argparse.ArgumentParser) -> None:
    """`--db` is accepted before or after the subcommand."""
    parser.add_argument("--db", default=argparse.SUPPRESS, help="DuckDB file (default: $TEXTGEN_EVAL_DB or textgen_eval.duckdb)")


def build_parser() -> argparse.ArgumentParser:
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
    for name in SUBCOMMAND_MODULES:
        import_module(f".{name}", __package__).register(sub)
    return parser


def open_store(args: argparse.Namespace, *, read_only: bool = False) -> Store:
    """The store of ``--db``; waiting for a file another program holds is announced on stderr.

    Read-only commands open the file read-only, so they run beside other readers and
    never create a database.
    """
    def tell(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    return Store(args.db, read_only=read_only, on_wait=tell)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
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
