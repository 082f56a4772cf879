"""The docs' metric table (docs/metrics.md) is the one the declarations generate (``textgen-eval metrics --markdown``): one row
per registered metric, none for a metric that is gone, and each row says what its MetricSpec declares."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from docs_files import section
from textgen_core.cli.metrics import metrics_markdown
from textgen_core.registry import all_metrics, get_metric

ROOT = Path(__file__).resolve().parents[2]
ARROW = {"higher": "↑", "lower": "↓", "none": "–"}


def test_the_readme_table_is_the_generated_one() -> None:
    assert section("<!-- metrics:", "<!-- /metrics -->") == metrics_markdown()


def test_the_command_prints_the_same_table() -> None:
    out = subprocess.run([sys.executable, "-m", "textgen_core.cli.main", "metrics", "--markdown"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120, check=True).stdout
    assert out == metrics_markdown()


def test_every_declared_metric_has_its_row_and_each_row_says_what_the_declaration_says() -> None:
    rows = {}
    for line in metrics_markdown().splitlines()[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        rows[cells[0].strip("`")] = cells
    assert sorted(rows) == sorted(all_metrics())
    for name, (_, _kind, scores, needs, better, what) in rows.items():
        spec = get_metric(name)
        assert better == ARROW[spec.direction] and what == spec.description, name
        assert all(field in needs for field in spec.needs), name
        assert scores.split(", ") == list(spec.outputs(spec.resolve())), name
