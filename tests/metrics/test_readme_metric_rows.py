"""The README's metric table follows the declarations: one row per registered metric and none for a metric that
is gone; its kind, the fields it needs and its direction are those the MetricSpec declares."""

from __future__ import annotations

from pathlib import Path

from textgen_core.metrics.registry import all_metrics, get_metric

README = Path(__file__).resolve().parents[2] / "README.md"
KIND = {"lexical": "lexical", "llm": "judge", "endpoint": "endpoint"}
ARROW = {"higher": "↑", "lower": "↓", "none": "–"}


def _rows() -> dict[str, list[str]]:
    text = README.read_text(encoding="utf-8")
    table = text[text.index("| metric | kind | scores written | needs | better |"):]
    rows = {}
    for line in table.splitlines()[2:]:
        if not line.startswith("| `"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        rows[cells[0].strip("`")] = cells
    return rows


def test_every_declared_metric_has_its_row_and_no_other_row_is_there() -> None:
    rows = _rows()
    assert sorted(rows) == sorted(all_metrics())


def test_each_row_says_what_the_declaration_says() -> None:
    for name, (_, kind, _scores, needs, better) in _rows().items():
        spec = get_metric(name)
        assert kind.split()[0].rstrip(",") == KIND[spec.group], (name, kind)
        assert better == ARROW[spec.direction], (name, better)
        for field in spec.needs:
            assert field in needs, (name, field, needs)
