"""Rewrite the README's generated tables (metrics, judge settings) from the declarations, in place.

Run after adding a metric or a judge setting: ``python scripts/readme-tables.py``. The README tests hold the
two sections equal to ``textgen-eval metrics --markdown [metrics|settings]``; this writes exactly that.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from textgen_core.cli.metrics import metrics_markdown  # noqa: E402
from textgen_core.judge.settings import settings_markdown  # noqa: E402

#: (opening marker, closing marker, the table) of each generated section.
SECTIONS = (("<!-- metrics:", "<!-- /metrics -->", metrics_markdown),
            ("<!-- judge-settings:", "<!-- /judge-settings -->", settings_markdown))


def rewrite(text: str) -> str:
    """``text`` with every generated section replaced by the table its declarations make now."""
    for opening, closing, table in SECTIONS:
        start = text.index("\n", text.index(opening)) + 1
        text = text[:start] + table() + text[text.index(closing):]
    return text


if __name__ == "__main__":
    readme = ROOT / "README.md"
    before = readme.read_text(encoding="utf-8")
    after = rewrite(before)
    if after != before:
        readme.write_text(after, encoding="utf-8")
    print("README.md " + ("updated" if after != before else "already up to date"))
