"""The README's commands and Python examples run as written, in order, in an empty directory.

Shell blocks: every `textgen-eval` command runs as a real process; the judge
URL of the examples (http://127.0.0.1:8000/v1) is pointed at the loopback judge
server the test starts, and the dashboard command gets a free port, is checked
on 127.0.0.1 and stopped with Ctrl-C (SIGINT) as the README says. The `make`
commands of the quick start are checked by tests/project/test_packaging.py. Python
blocks run afterwards in the same directory, in one namespace per block.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from dashboard_process import serve_check_and_stop

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
EXAMPLE_JUDGE = "http://127.0.0.1:8000/v1"
FENCE = re.compile(r"^```(\w+)\n(.*?)^```", re.S | re.M)


def blocks(language: str) -> list[str]:
    """Fenced code blocks of one language, in README order."""
    return [body for lang, body in FENCE.findall(README.read_text(encoding="utf-8")) if lang == language]


def shell_commands() -> list[list[str]]:
    """Each command of the bash blocks as argv: continuation lines joined, comments dropped."""
    commands = []
    for body in blocks("bash"):
        for line in body.replace("\\\n", " ").splitlines():
            argv = shlex.split(line, comments=True)
            if argv:
                commands.append(argv)
    return commands


def _cli() -> list[str]:
    """How to start the installed `textgen-eval` of this interpreter's environment."""
    script = Path(sys.executable).with_name("textgen-eval")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "textgen_core"]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TEXTGEN_EVAL_")}
    env.pop("OPENAI_API_KEY", None)
    return env


@pytest.mark.timeout(600)
def test_readme_commands_and_examples_run_in_order_in_an_empty_directory(tmp_path, judge_server, monkeypatch):
    commands = shell_commands()
    names = [" ".join(argv[:2]) for argv in commands]
    assert names[:2] == ["make dashboard", "make test"] and "textgen-eval sample" in names
    ran = []
    for argv in commands:
        if argv[0] == "make":
            continue  # tests/project/test_packaging.py
        assert argv[0] == "textgen-eval", f"README command the test does not know how to run: {argv}"
        argv = _cli() + [judge_server.url if arg == EXAMPLE_JUDGE else arg for arg in argv[1:]]
        if "dashboard" in argv:
            serve_check_and_stop(argv, tmp_path, _env())
            ran.append("dashboard")
            continue
        done = subprocess.run(argv, cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"{shlex.join(argv[1:])} -> {done.returncode}\n{done.stdout}\n{done.stderr}"
        assert "Traceback" not in done.stderr, done.stderr
        ran.append(argv[len(_cli())])
    assert {"sample", "run", "runs", "datasets", "resume", "export", "compare", "agreement", "metrics",
            "dashboard"} <= set(ran)
    assert judge_server.count() > 0  # the judge example ran against the loopback server
    for made in ("outputs.csv", "scores.csv", "run1.parquet", "textgen_eval.duckdb"):
        assert (tmp_path / made).is_file(), made

    monkeypatch.chdir(tmp_path)
    python = blocks("python")
    assert len(python) >= 2
    for code in python:
        code = code.replace(EXAMPLE_JUDGE, judge_server.url)
        with contextlib.redirect_stdout(io.StringIO()) as out:
            exec(compile(code, "README.md", "exec"), {"__name__": "__readme__"})
        assert out.getvalue().strip(), code  # each example prints its result
    assert (tmp_path / "evals.duckdb").is_file()


def test_a_missing_file_is_not_found(tmp_path):
    done = subprocess.run(_cli() + ["run", "MISSING.csv", "--metrics", "rouge"], cwd=tmp_path, env=_env(),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.startswith("error: file not found: MISSING.csv"), done.stderr
    assert "Traceback" not in done.stderr


def test_readme_documents_every_subcommand():
    from textgen_core.cli.main import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    text = README.read_text(encoding="utf-8")
    for name in sub.choices:
        assert re.search(rf"textgen-eval (--db \S+ )?{name}\b", text), name


def test_readme_layout_matches_the_tree():
    """The Development section names the folders that hold the code, and no folder that is gone."""
    text = README.read_text(encoding="utf-8")
    layout = text[text.index("Layout:"):]
    for folder in ("textgen_core/", "textgen_dashboard/", "views/", "tests/", "bench/", "scripts/"):
        assert folder in layout, folder
    assert "`pages/`" not in layout and not (ROOT / "pages").exists()
