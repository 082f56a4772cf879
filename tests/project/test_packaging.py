"""Packaging and the quick start: a plain (non-editable) install serves the dashboard; the Makefile's venv.

The install test builds a wheel from a copy of the sources (nothing is written
to the checkout), installs it without its dependencies into a new virtual
environment whose dependencies come from this test environment (a .pth line;
the editable checkout is not on that path), then runs the installed app from
another directory.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from dashboard_process import serve_check_and_stop

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("pyproject.toml", "README.md", "textgen_core", "textgen_dashboard")


def _build_backend_is_here() -> bool:
    """Whether this environment meets the build requirements of pyproject.toml (then the wheel is built with them)."""
    import tomllib
    from importlib.metadata import PackageNotFoundError, version

    from packaging.requirements import Requirement

    system = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["build-system"]
    try:
        return all(req.specifier.contains(version(req.name)) for req in map(Requirement, system["requires"]))
    except PackageNotFoundError:
        return False


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel of the working tree, built in a copy of it."""
    here = _build_backend_is_here()
    src = tmp_path_factory.mktemp("src")
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(ROOT / name, src / name)
    out = tmp_path_factory.mktemp("wheel")
    # Built with this environment's setuptools when it is the backend pyproject.toml names (checked first) instead of
    # pip's isolated build environment, whose set-up cost more than the build itself (7.6 s of CPU against 2.3 s).
    isolation = ["--no-build-isolation"] if here else []
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", *isolation,
                           "-w", str(out), str(src)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return next(out.glob("textgen_eval-*.whl"))


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new virtual environment with the wheel installed (not editable); returns its bin directory."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               capture_output=True, text=True, check=True).stdout.strip())
    deps = [p for p in map(Path, sys.path) if p.name == "site-packages" and p.is_dir()]
    (site / "test_dependencies.pth").write_text("\n".join(map(str, deps)) + "\n")
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                           str(wheel)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return venv / "bin"


def test_the_wheel_holds_the_dashboard_and_no_generic_top_level_name(wheel: Path):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names if not n.startswith("textgen_eval-")}
    assert tops == {"textgen_core", "textgen_dashboard"}
    for needed in ("textgen_dashboard/app.py", "textgen_dashboard/views/home.py", "textgen_dashboard/views/explore.py",
                   "textgen_dashboard/.streamlit/config.toml", "textgen_core/data/sample_qa.csv"):
        assert needed in names, needed


def _run(bin_dir: Path, code: str, cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TEXTGEN_EVAL_DB")}
    done = subprocess.run([str(bin_dir / "python"), "-c", code], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_the_installed_app_renders_every_page_from_site_packages(installed: Path, tmp_path: Path):
    code = (
        "import os, textgen_dashboard\n"
        "from streamlit.testing.v1 import AppTest\n"
        "from textgen_dashboard.app import PAGES\n"
        "app = textgen_dashboard.app_path()\n"
        "assert 'site-packages' in str(app) and '/work/main/' not in str(app), app\n"
        "os.environ['TEXTGEN_EVAL_DB'] = 'installed.duckdb'\n"
        "at = AppTest.from_file(str(app), default_timeout=120).run()\n"
        "assert not at.exception, [e.value for e in at.exception]\n"
        "print(at.title[0].value)\n"
        "for name, _, _ in PAGES[1:]:\n"
        "    at.switch_page(f'views/{name}.py').run()\n"
        "    assert not at.exception, (name, [e.value for e in at.exception])\n"
        "    print(name, 'ok', bool(at.title))\n"
        "import importlib.util\n"
        "print('ui module:', importlib.util.find_spec('ui'))\n"
    )
    out = _run(installed, code, tmp_path)
    lines = out.splitlines()
    assert lines[0] == "textgen-eval"
    pages = ("upload", "evaluate", "results", "explore", "compare", "history", "label", "criteria", "runs")
    assert lines[1:1 + len(pages)] == [f"{name} ok True" for name in pages]
    assert "ui module: None" in out
    assert (tmp_path / "installed.duckdb").is_file()


def test_textgen_eval_dashboard_serves_from_another_directory(installed: Path, tmp_path: Path):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TEXTGEN_EVAL_DB")}
    serve_check_and_stop([str(installed / "textgen-eval"), "--db", "mine.duckdb", "dashboard"], tmp_path, env)


# -- the Makefile: which interpreter, and the venv step --------------------------------------
def _make_dry(target: str, env: dict[str, str]) -> list[str]:
    env = {k: v for k, v in env.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}  # inside `make test` too
    done = subprocess.run(["make", "-n", "--no-print-directory", target], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_uses_a_project_venv_unless_one_is_active():
    base = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHON")}
    lines = _make_dry("dashboard", base)
    assert lines[0] == 'bash scripts/make-venv.sh "python3" ".venv" ".venv/bin/python"'
    assert lines[-1] == ".venv/bin/python -m textgen_core --db textgen_eval.duckdb dashboard"
    assert any(line == '.venv/bin/python -m pip install -q -e .' for line in lines)
    # both installs leave BLEU's compiled kernels in numba's cache (tests/metrics/lexical/test_lexical_bleu_kernel.py)
    for target in ("dashboard", "test"):
        assert any("bleu_kernel import compile_now; compile_now()" in line for line in _make_dry(target, base))
    active = _make_dry("test", base | {"VIRTUAL_ENV": "/opt/env"})
    assert active[-1] == "/opt/env/bin/python -m pytest -n 2"
    exported = _make_dry("dashboard", base | {"PYTHON": "/usr/bin/python3"})  # some images export $PYTHON
    assert exported[-1].startswith(".venv/bin/python ")


def test_make_venv_creates_a_venv_with_pip_once_and_repairs_a_broken_one(tmp_path: Path):
    system = "/usr/bin/python3" if Path("/usr/bin/python3").is_file() else sys.executable
    venv = tmp_path / "venv"
    script = [str(ROOT / "scripts" / "make-venv.sh"), system, str(venv), str(venv / "bin" / "python")]
    env = dict(os.environ, PIP_NO_INDEX="1")  # creating a venv must not need the network to succeed below
    first = subprocess.run(["bash", *script], capture_output=True, text=True, timeout=300, env=env)
    assert "creating the virtual environment" in first.stdout
    assert subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "--version"], capture_output=True).returncode == 0
    again = subprocess.run(["bash", *script], capture_output=True, text=True, timeout=60, env=env)
    assert again.returncode == 0 and again.stdout == ""  # an existing venv with pip is kept as it is
    for pip in (venv / "lib").glob("python3*/site-packages/pip"):
        shutil.rmtree(pip)  # a venv left without pip (python3-venv missing when it was made)
    repaired = subprocess.run(["bash", *script], capture_output=True, text=True, timeout=300, env=env)
    assert "creating the virtual environment" in repaired.stdout
    assert subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "--version"], capture_output=True).returncode == 0
