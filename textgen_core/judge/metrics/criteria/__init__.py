"""Custom judge metrics defined as data (a TOML file, a dict, a :class:`Criterion`, a saved definition).

:func:`define` checks a definition and makes its metric known to this process
by name, next to the built-in metrics: ``get_metric``, the judge engine and the
fingerprint then treat it like any other judge metric. Defining the same name
again with another text replaces it (the dashboard's edit), and a run that
used the earlier text refuses to resume, naming what changed.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ....errors import ParameterError
from ....metrics.local import LOCAL_SPECS
from ....metrics.spec import MetricSpec
from .definition import Criterion, Example, Output, criterion, read_toml
from .known import defined, definition, definitions, remember
from .metric import request, spec, system_prompt, version

__all__ = ["Criterion", "Example", "Output", "criterion", "read_toml", "define", "define_file", "define_files", "defined",
           "definition", "definitions", "restore", "restore_run", "request", "system_prompt", "version"]


def _score_names(made: MetricSpec) -> set[str]:
    """Every score name a built-in metric can write: under its defaults, and with each list-valued choice
    parameter (rouge's rouge_types) set to all of its choices."""
    names = set(made.outputs(made.resolve()))
    for p in made.params:
        if p.kind == "choices" and p.choices:
            try:
                names |= set(made.outputs(made.resolve({p.name: list(p.choices)})))
            except ParameterError:
                pass
    return names


def builtin_owner(name: str) -> str | None:
    """The built-in metric named ``name`` or writing a score of that name ('token_f1' for 'f1'), else None."""
    from .. import BUILT_IN  # the judge package declares them; it imports this one, so at call time

    for made in (*LOCAL_SPECS, *BUILT_IN.values()):
        if made.name == name or name in _score_names(made):
            return made.name
    return None


def define(raw: "Mapping[str, Any] | Criterion", where: str = "") -> MetricSpec:
    """Check ``raw`` and make its metric known by name; returns its declaration. A name that is a built-in
    metric's or a built-in score's is refused: the built-in would silently be scored instead."""
    c = criterion(raw, where)
    owner = builtin_owner(c.name)
    if owner is not None:
        what = "is a built-in metric" if owner == c.name else f"is a score of the built-in metric {owner}"
        raise ParameterError(f"judge metric definition{f' in {where}' if where else ''}: key 'name' {c.name!r} "
                             f"{what}; choose another name")
    made = spec(c)
    remember(c, made)
    return made


def define_file(path: str) -> list[str]:
    """Define every metric of a TOML file; their names."""
    return define_files([path])


def define_files(paths: Sequence[str]) -> list[str]:
    """Define every metric of several TOML files; their names. Every file is read and checked first, and a
    name defined in two files is refused naming both (never the last one winning)."""
    found: dict[str, tuple[str, Criterion]] = {}
    for path in paths:
        for c in read_toml(path):
            if c.name in found and found[c.name][0] != str(path):
                raise ParameterError(f"judge metric {c.name!r} is defined in two files, {found[c.name][0]} and "
                                     f"{path}: keep one definition (or rename one)")
            found[c.name] = (str(path), c)
    return [define(c, c.source).name for _, c in found.values()]


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
