"""Custom judge metrics defined as data (a TOML file, a dict, a :class:`Criterion`, a saved definition).

:func:`define` checks a definition and makes its metric known to this process
by name, next to the built-in metrics: ``get_metric``, the judge engine and the
fingerprint then treat it like any other judge metric. Defining the same name
again with another text replaces it (the dashboard's edit), and a run that
used the earlier text refuses to resume, naming what changed.
"""

from __future__ import annotations

from typing import Any, Mapping

from ....errors import ParameterError
from ....metrics.local import LOCAL_SPECS
from ....metrics.spec import MetricSpec
from .definition import Criterion, Output, criterion, read_toml
from .known import defined, definition, definitions, remember
from .metric import request, spec, system_prompt, version

__all__ = ["Criterion", "Output", "criterion", "read_toml", "define", "defined", "definition", "definitions",
           "restore", "restore_run", "request", "system_prompt", "version"]


def _builtin(name: str) -> bool:
    from .. import BUILT_IN  # the judge package declares them; it imports this one, so at call time

    return name in BUILT_IN or any(s.name == name for s in LOCAL_SPECS)


def define(raw: "Mapping[str, Any] | Criterion", where: str = "") -> MetricSpec:
    """Check ``raw`` and make its metric known by name; returns its declaration."""
    c = criterion(raw, where)
    if _builtin(c.name):
        raise ParameterError(f"judge metric definition{f' in {where}' if where else ''}: key 'name' {c.name!r} "
                             "is a built-in metric; choose another name")
    made = spec(c)
    remember(c, made)
    return made


def define_file(path: str) -> list[str]:
    """Define every metric of a TOML file; their names."""
    return [define(c, c.source).name for c in read_toml(path)]


def restore(texts: Mapping[str, Any] | None) -> None:
    """Define the stored definitions of a run (its fingerprint's ``criteria``) that are not defined yet, so a
    run can be resumed or read without its file; a definition given again (edited or not) is left as given."""
    for name, raw in (texts or {}).items():
        if defined(name) is None:
            define(raw, f"run's stored definition of {name}")


def restore_run(run: Mapping[str, Any]) -> None:
    """Define a stored run's custom judge metrics, so that readers of the run (resume, summary, compare,
    agreement, the dashboard) see their declared direction and scale, not the registry's fallback."""
    restore(((run.get("judge") or {}).get("fingerprint") or {}).get("criteria"))
