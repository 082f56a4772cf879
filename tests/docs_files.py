"""The project's documents, in reading order: the README, then docs/ (the order their command blocks run in).

Tests that hold the docs to the code read them through here, so a section may move between files freely:
``docs_text()`` is every document joined, ``DOCS`` their paths. A new file under docs/ must be added to
``ORDER`` (tests/project/test_readme.py fails until it is), at the place its command blocks can run: after
the blocks that make the runs and files it uses.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: docs/ files in the order their blocks run, after the README's.
ORDER = ("cli.md", "data.md", "judge.md", "judge-keys.md", "criteria.md", "labels.md", "statistics.md", "scale.md",
         "python.md", "metrics.md", "performance.md", "development.md", "ARCHITECTURE.md", "dashboard.md", "report.md",
         "failures.md", "runs-over-time.md", "alignment.md")

DOCS = (ROOT / "README.md", *(ROOT / "docs" / name for name in ORDER))


def docs_text() -> str:
    """Every document (those that exist) joined, README first."""
    return "\n".join(path.read_text(encoding="utf-8") for path in DOCS if path.is_file())


def section(opening: str, closing: str) -> str:
    """The text between the line holding ``opening`` and ``closing``, in whichever document holds it."""
    text = docs_text()
    start = text.index("\n", text.index(opening)) + 1
    return text[start:text.index(closing)]
