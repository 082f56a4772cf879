"""`textgen-eval dashboard`: launch the Streamlit app on a database."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from textgen_dashboard import app_path

from ..errors import TextgenError
from .main import add_db_argument


def register(sub: argparse._SubParsersAction) -> None:
    dash = sub.add_parser("dashboard", help="open the dashboard in a browser")
    dash.add_argument("--port", type=int, default=8501)
    dash.add_argument("--host", default="127.0.0.1")
    add_db_argument(dash)
    dash.set_defaults(handler=_dashboard)


def _dashboard(args: argparse.Namespace) -> int:
    app = app_path()  # inside the installed package; importing it does not import streamlit
    if not app.is_file():
        raise TextgenError(f"the dashboard is missing from the installed package ({app}): reinstall textgen-eval")
    env = dict(os.environ, TEXTGEN_EVAL_DB=str(Path(args.db).resolve()))
    command = [sys.executable, "-m", "streamlit", "run", str(app), "--server.port", str(args.port),
               "--server.address", args.host, "--browser.gatherUsageStats", "false"]
    print(f"serving the dashboard on http://{args.host}:{args.port} (database {env['TEXTGEN_EVAL_DB']}); "
          "Ctrl-C stops it", flush=True)
    sys.stderr.flush()
    # This process becomes the server (same PID): Ctrl-C, SIGTERM or a closed terminal stop the server
    # itself, and no orphan keeps serving or holding the database. The working directory stays:
    # ./.streamlit/secrets.toml is read there.
    os.execve(sys.executable, command, env)
    return 0  # pragma: no cover - execve does not return
