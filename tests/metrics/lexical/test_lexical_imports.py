"""No import circle in or through the lexical metrics package, counting imports inside functions too."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = "textgen_core.metrics.lexical"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, name: str, known: set[str]) -> set[str]:
    """Project modules ``path`` imports anywhere in its body, in functions too (a package counts as its __init__)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            # ``from pkg import module`` imports that module; ``from pkg import name`` imports pkg
            modules = [f"{base}.{alias.name}" for alias in node.names]
            targets = [m if m in known else base for m in modules]
        else:
            continue
        found.update(t for t in targets if t in known)
    found.discard(name)
    return found


def _graph() -> dict[str, set[str]]:
    files = {_module_name(p): p for p in (ROOT / "textgen_core").rglob("*.py")}
    known = set(files)
    return {name: _imports(path, name, known) for name, path in files.items()}


def _cycle_through(graph: dict[str, set[str]], start: str) -> list[str] | None:
    """A path start -> ... -> start, if one exists."""
    stack = [(start, [start])]
    seen: set[str] = set()
    while stack:
        node, path = stack.pop()
        for nxt in graph.get(node, ()):
            if nxt == start:
                return path + [start]
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, path + [nxt]))
    return None


def test_no_lexical_module_is_part_of_an_import_circle():
    graph = _graph()
    lexical = sorted(m for m in graph if m == PACKAGE or m.startswith(PACKAGE + "."))
    assert len(lexical) > 10
    circles = [" -> ".join(c) for m in lexical if (c := _cycle_through(graph, m))]
    assert not circles, circles


def test_the_checker_sees_a_circle():
    assert _cycle_through({"a": {"b"}, "b": {"c"}, "c": {"a"}}, "a") == ["a", "b", "c", "a"]
    assert _cycle_through({"a": {"b"}, "b": set()}, "a") is None
