"""The custom judge metrics this process knows: the one table :func:`..define` writes and every reader asks.

Kept apart from the package's ``define`` (which checks a name against every built-in metric through the
registry) so that the registry and the judge metrics can ask what is defined without an import circle.
"""

from __future__ import annotations

import threading

from ....metrics.spec import MetricSpec
from .definition import Criterion

_LOCK = threading.Lock()
_DEFINED: dict[str, tuple[Criterion, MetricSpec]] = {}


def remember(c: Criterion, made: MetricSpec) -> None:
    """Make ``c`` known by its name (replacing an earlier text of the same name)."""
    with _LOCK:
        _DEFINED[c.name] = (c, made)


def defined(name: str) -> MetricSpec | None:
    """The declaration of a defined custom metric, or None."""
    with _LOCK:
        found = _DEFINED.get(name)
    return found[1] if found else None


def definition(name: str) -> Criterion | None:
    """The definition of a defined custom metric, or None."""
    with _LOCK:
        found = _DEFINED.get(name)
    return found[0] if found else None


def definitions() -> dict[str, Criterion]:
    """Every defined custom metric by name."""
    with _LOCK:
        return {name: c for name, (c, _) in _DEFINED.items()}
