"""The judge and the store never import each other, not even for type checking; the registry hides no judge."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "textgen_core"


def imported(path: Path) -> set[str]:
    """Absolute module names imported by one file (relative imports resolved)."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = list(parts[:-1])  # a module's package (for __init__.py, the package itself)
            if node.level:
                base = base[:len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


@pytest.mark.parametrize("package, forbidden", [("judge", "textgen_core.store"), ("store", "textgen_core.judge"),
                                                ("llm", "textgen_core.judge"), ("llm", "textgen_core.store"),
                                                ("llm", "textgen_core.metrics")])
def test_no_import_between_judge_and_store(package: str, forbidden: str) -> None:
    offenders = {str(p.relative_to(PACKAGE)): sorted(n for n in imported(p) if n.startswith(forbidden))
                 for p in (PACKAGE / package).rglob("*.py")}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_registry_does_not_swallow_a_broken_judge_import() -> None:
    source = (PACKAGE / "registry.py").read_text(encoding="utf-8")  # textgen_core/registry.py since 634a9c3
    assert "except ImportError" not in source
