"""A page's first visit imports only what the page draws: Results, Explore, Label, Runs, Evaluate, Upload and the
judge criteria editor load without scipy.stats (the comparison's tests, ~1 CPU-s) or openai and the judge engine
(~1.2 CPU-s); those come with the Compare page, a slice, a judge trial or a run. Checked in a fresh interpreter,
where nothing of the test process is imported already."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Render modules of pages that must not pull the heavy parts in at import.
LIGHT_PAGES = ("results", "explore", "labeling", "runs", "evaluate", "upload", "criteria", "home")
#: Modules a light page leaves to the moment they are used.
LATER = ("scipy.stats", "scipy.optimize", "openai", "jsonschema", "textgen_core.judge.engine",
         "textgen_core.compare.comparison")


def test_light_pages_import_no_statistics_tests_and_no_judge_client() -> None:
    code = ("import json, sys\n"
            + "".join(f"import textgen_dashboard.{name}\n" for name in LIGHT_PAGES)
            + f"print(json.dumps(sorted(m for m in {list(LATER)!r} if m in sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


def test_the_compare_page_still_brings_the_comparison() -> None:
    """The check above can fail: the Compare page's own module imports the comparison it draws."""
    from textgen_dashboard import compare  # noqa: F401 (imported for its effect)

    assert "textgen_core.compare.comparison" in sys.modules
