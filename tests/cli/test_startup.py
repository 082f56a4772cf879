"""The CLI starts at once: `--help`, `metrics` and `runs` import only what they use.

Each check runs the real entry point in a fresh interpreter and reads ``sys.modules`` after it: a heavy import
added at the top of a command module, or of a module the package imports at once, fails here by name.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from textgen_core.cli.main import COMMANDS, build_parser, main

#: Never imported by `textgen-eval --help`.
HEAVY = ("scipy", "openai", "pandas", "pyarrow", "jsonschema", "aiohttp", "plotly", "streamlit", "torch", "ray",
         "duckdb", "numpy", "sklearn", "httpx", "nltk", "numba")
#: Not used to list metrics or runs.
UNUSED_BY_LISTINGS = ("scipy", "openai", "jsonschema", "aiohttp", "plotly", "streamlit", "torch", "ray", "sklearn",
                      "httpx")

_PROBE = """
import contextlib, io, json, sys
from textgen_core.cli.main import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        code = main(sys.argv[1:])
    except SystemExit as stop:
        code = stop.code
print(json.dumps({"code": code, "modules": sorted({name.split(".")[0] for name in sys.modules})}))
"""


def _imported(tmp_path, *argv: str) -> tuple[int, set[str]]:
    done = subprocess.run([sys.executable, "-c", _PROBE, "--db", str(tmp_path / "x.duckdb"), *argv],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return report["code"], set(report["modules"])


def test_help_imports_nothing_heavy(tmp_path):
    code, modules = _imported(tmp_path, "--help")
    assert code == 0
    assert not modules & set(HEAVY), sorted(modules & set(HEAVY))


@pytest.mark.parametrize("command", ["metrics", "runs"])
def test_listings_import_only_what_they_use(tmp_path, command):
    if command == "runs":  # on a database that exists (an absent one is refused before anything is read)
        assert main(["--db", str(tmp_path / "x.duckdb"), "run", "sample", "--metrics", "exact_match"]) == 0
    code, modules = _imported(tmp_path, command)
    assert code == 0
    assert not modules & set(UNUSED_BY_LISTINGS), sorted(modules & set(UNUSED_BY_LISTINGS))


def test_the_command_table_lists_every_command_with_the_help_its_module_registers():
    parser = build_parser()  # every module imported: the commands as they really are
    sub = next(a for a in parser._actions if a.dest == "command")
    registered = {action.dest: action.help for action in sub._choices_actions}
    assert {name: text for name, (_, text) in COMMANDS.items()} == registered


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_each_command_parses_with_only_its_own_module(command, capsys):
    with pytest.raises(SystemExit) as stop:
        main([command, "--help"])
    assert stop.value.code == 0
    assert f"usage: textgen-eval {command}" in capsys.readouterr().out


def test_an_unknown_command_is_refused_by_name(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["frobnicate"])
    assert stop.value.code == 2
    assert "invalid choice: 'frobnicate'" in capsys.readouterr().err
