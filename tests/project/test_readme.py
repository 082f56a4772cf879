"""The README's and the docs' commands and Python examples run as written, in order, in an empty directory.

Documents are read in the order of tests/docs_files.py (README first). Every fenced block, indented ones
inside list items included, is taken in document order:

* ``bash`` and ``console`` blocks: every ``textgen-eval`` command runs (continuation lines joined, comments
  dropped) through the CLI's entry point, ``textgen_core.cli.main.main(argv)`` — the function the installed
  ``textgen-eval`` script calls — in this test's process: one interpreter start instead of 75 (the same walk as
  real processes took 210 s). The first command also runs as a real process of the installed script, and
  tests/cli/ start the script for every command family. The judge URL of the examples
  (http://127.0.0.1:8000/v1) is pointed at the loopback judge server the test starts, and the dashboard command
  gets a free port, is checked on 127.0.0.1 and stopped with Ctrl-C (SIGINT) as the README says. The `make`
  commands of the quick start are checked by tests/project/test_packaging.py.
* a block whose info string names a file (```` ```toml rubric.toml ````, ```` ```csv ratings.csv ````) is
  written to that file, so the commands after it find it;
* ``python`` blocks run in the same directory, in one namespace per block, and must print something;
* ``text`` blocks are illustrations: output, or commands for software a test machine has not (llama-server,
  an Azure deployment); ``toml`` blocks without a file name are fragments shown for reading.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from dashboard_process import serve_check_and_stop
from docs_files import DOCS, ORDER, ROOT

README = ROOT / "README.md"
EXAMPLE_JUDGE = "http://127.0.0.1:8000/v1"
FENCE = re.compile(r"^( *)```(\w+)([^\n]*)\n(.*?)^\1```", re.S | re.M)
RUNNABLE = ("bash", "console")


def all_blocks() -> list[tuple[str, str, str, str]]:
    """(document, language, file name or "", body) of every fenced block, in reading order."""
    found = []
    for path in DOCS:
        if not path.is_file():
            continue
        for indent, lang, info, body in FENCE.findall(path.read_text(encoding="utf-8")):
            found.append((path.name, lang, info.strip(), textwrap.dedent(body) if indent else body))
    return found


def blocks(language: str) -> list[str]:
    """Fenced code blocks of one language, in reading order."""
    return [body for _, lang, _, body in all_blocks() if lang == language]


def commands_of(body: str) -> list[list[str]]:
    """Each command of a shell block as argv: continuation lines joined, comments dropped."""
    commands = []
    for line in body.replace("\\\n", " ").splitlines():
        argv = shlex.split(line, comments=True)
        if argv:
            commands.append(argv)
    return commands


def shell_commands() -> list[list[str]]:
    return [argv for _, lang, _, body in all_blocks() if lang in RUNNABLE for argv in commands_of(body)]


def _cli() -> list[str]:
    """How to start the installed `textgen-eval` of this interpreter's environment."""
    script = Path(sys.executable).with_name("textgen-eval")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "textgen_core"]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TEXTGEN_EVAL_")}
    env.pop("OPENAI_API_KEY", None)
    return env


def test_every_docs_file_has_its_place_in_the_order():
    present = {path.name for path in (ROOT / "docs").glob("*.md")}
    assert present <= set(ORDER), f"add {sorted(present - set(ORDER))} to ORDER in tests/docs_files.py"


def test_the_readme_is_a_front_door():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 250


def _run_command(argv: list[str], cwd: Path, judge_url: str, where: str, *, process: bool = False) -> str:
    """Run one documented command; in this process through the CLI's entry point unless `process`."""
    if argv[0] == "make":
        return "make"  # tests/project/test_packaging.py
    assert argv[0] == "textgen-eval", f"{where}: a command the test does not know how to run: {argv}"
    args = [judge_url if arg == EXAMPLE_JUDGE else arg for arg in argv[1:]]
    if "dashboard" in args:
        serve_check_and_stop(_cli() + args, cwd, _env())
        return "dashboard"
    started = time.monotonic()
    if process:
        done = subprocess.run(_cli() + args, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=300)
        code, out, err = done.returncode, done.stdout, done.stderr
    else:
        from textgen_core.cli.main import main

        with contextlib.redirect_stdout(io.StringIO()) as stdout, contextlib.redirect_stderr(io.StringIO()) as stderr:
            try:
                code = main(args)
            except SystemExit as stop:
                code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        out, err = stdout.getvalue(), stderr.getvalue()
    print(f"{where}: {shlex.join(args)[:100]} -> {code} in {time.monotonic() - started:.1f} s", flush=True)
    assert code == 0, f"{where}: {shlex.join(args)} -> {code}\n{out}\n{err}"
    assert "Traceback" not in err, err
    return args[0]


@pytest.mark.timeout(900)
def test_readme_and_docs_commands_and_examples_run_in_order_in_an_empty_directory(tmp_path, judge_server,
                                                                                    monkeypatch):
    names = [" ".join(argv[:2]) for argv in shell_commands()]
    assert names[:2] == ["make dashboard", "make test"] and "textgen-eval sample" in names
    monkeypatch.chdir(tmp_path)
    for name in [k for k in os.environ if k.startswith("TEXTGEN_EVAL_")] + ["OPENAI_API_KEY"]:
        monkeypatch.delenv(name, raising=False)
    environ = dict(os.environ)  # the commands may set offline switches; they do not outlive the test
    ran, pythons = [], 0
    try:
        for where, lang, file_name, body in all_blocks():
            if file_name:
                (tmp_path / file_name).write_text(body.replace(EXAMPLE_JUDGE, judge_server.url), encoding="utf-8")
            elif lang in RUNNABLE:
                for argv in commands_of(body):
                    ran.append(_run_command(argv, tmp_path, judge_server.url, where, process=set(ran) <= {"make"}))
            elif lang == "python":
                code = body.replace(EXAMPLE_JUDGE, judge_server.url)
                with contextlib.redirect_stdout(io.StringIO()) as out:
                    exec(compile(code, where, "exec"), {"__name__": "__readme__"})
                assert out.getvalue().strip(), f"{where}: an example prints its result\n{code}"
                pythons += 1
    finally:
        os.environ.clear()
        os.environ.update(environ)
    assert {"sample", "run", "runs", "datasets", "resume", "export", "compare", "agreement", "metrics", "labels",
            "dashboard"} <= set(ran)
    assert judge_server.count() > 0  # the judge examples ran against the loopback server
    assert pythons >= 3
    for made in ("outputs.csv", "scores.csv", "run1.parquet", "textgen_eval.duckdb", "evals.duckdb"):
        assert (tmp_path / made).is_file(), made


def test_a_missing_file_is_not_found(tmp_path, cli_main, monkeypatch):
    # through main(argv), the installed script's function (the first documented command runs as a process)
    for name in [k for k in os.environ if k.startswith("TEXTGEN_EVAL_")] + ["OPENAI_API_KEY"]:
        monkeypatch.delenv(name, raising=False)
    done = cli_main("run", "MISSING.csv", "--metrics", "rouge", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("error: file not found: MISSING.csv"), done.stderr
    assert "Traceback" not in done.stderr


def test_readme_documents_every_subcommand():
    from textgen_core.cli.main import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    from docs_files import docs_text

    text = docs_text()
    for name in sub.choices:
        assert re.search(rf"textgen-eval (--db \S+ )?{name}\b", text), name


def test_readme_layout_matches_the_tree():
    """The Development section names the folders that hold the code, and no folder that is gone."""
    text = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
    layout = text[text.index("Layout:"):]
    for folder in ("textgen_core/", "textgen_dashboard/", "views/", "tests/", "bench/", "scripts/"):
        assert folder in layout, folder
    assert "`pages/`" not in layout and not (ROOT / "pages").exists()
