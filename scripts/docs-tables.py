"""Rewrite the generated tables of the docs (metrics in docs/metrics.md, judge settings in docs/judge.md), in place.

Run after adding a metric or a judge setting: ``python scripts/docs-tables.py``. Tests hold the two sections
equal to ``textgen-eval metrics --markdown [metrics|settings]``; this writes exactly that.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from textgen_core.cli.metrics import metrics_markdown  # noqa: E402
from textgen_core.judge.settings import settings_markdown  # noqa: E402

#: (file, opening marker, closing marker, the table) of each generated section.
SECTIONS = (("docs/metrics.md", "<!-- metrics:", "<!-- /metrics -->", metrics_markdown),
            ("docs/judge.md", "<!-- judge-settings:", "<!-- /judge-settings -->", settings_markdown))


def rewrite(text: str, opening: str, closing: str, table) -> str:
    """``text`` with the generated section replaced by the table its declarations make now."""
    start = text.index("\n", text.index(opening)) + 1
    return text[:start] + table() + text[text.index(closing):]


if __name__ == "__main__":
    for name, opening, closing, table in SECTIONS:
        path = ROOT / name
        before = path.read_text(encoding="utf-8")
        after = rewrite(before, opening, closing, table)
        if after != before:
            path.write_text(after, encoding="utf-8")
        print(name + (" updated" if after != before else " already up to date"))
