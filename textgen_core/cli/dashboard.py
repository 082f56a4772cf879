"""`textgen-eval dashboard`: launch the Streamlit app on a database."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from ..errors import TextgenError
from .main import add_db_argument


def register(sub: argparse._SubParsersAction) -> None:
    dash = sub.add_parser("dashboard", help="open the dashboard in a browser")
    dash.add_argument("--port", type=int, default=8501)
    dash.add_argument("--host", default="127.0.0.1")
    add_db_argument(dash)
    dash.set_defaults(handler=_dashboard)


def app_path() -> Path:
    """app.py sits at the repository root, next to the package."""
    return Path(__file__).resolve().parents[2] / "app.py"


def _dashboard(args: argparse.Namespace) -> int:
    app = app_path()
    if not app.exists():
        raise TextgenError(f"cannot find the dashboard at {app}: run from a source checkout (pip install -e .)")
    env = dict(os.environ, TEXTGEN_EVAL_DB=str(Path(args.db).resolve()))
    command = [sys.executable, "-m", "streamlit", "run", str(app), "--server.port", str(args.port),
               "--server.address", args.host, "--browser.gatherUsageStats", "false"]
    return subprocess.call(command, env=env, cwd=app.parent)
