"""Repeated judging and judge panels, declared: who judges (members), how often (samples), how votes combine.

A :class:`Jury` is plain data, built once and handed to a run. Each member is
a full :class:`~textgen_core.judge.settings.JudgeSettings` (its own endpoint, key, prices), named
by its model (``model@endpoint`` when two members share a model). Every judge
request of a cell is asked of every member ``samples`` times; each answer is a
vote, and the cell is the votes' ``mean`` (ratings, shares) or ``majority``
(labels, yes/no) -- see :mod:`textgen_core.runs.jury`. One member and one
sample is a plain run: nothing of this applies, nothing changes.
"""

from __future__ import annotations

import os
import re
import sys
import tomllib
from dataclasses import dataclass, replace
from typing import Any, Mapping, Sequence
from urllib.parse import urlsplit

from ..errors import ParameterError
from ..judge.settings import JURY_BY_NAME, JudgeSettings
from ..small_file import read_small_file


@dataclass(frozen=True)
class Jury:
    """The members of a panel (the first one leads: the run's judge settings are its), the samples per
    request, and the declared aggregate (None: ``majority`` for label and yes/no metrics, else ``mean``)."""

    members: tuple[JudgeSettings, ...]
    samples: int = 1
    aggregate: str | None = None
    #: Per member, the name of the environment variable its key came from (kept so a resume finds it; never
    #: the key itself); empty or None: the lead's key.
    key_vars: tuple[str | None, ...] = ()

    def __post_init__(self) -> None:
        if not self.members:
            raise ParameterError("a judge panel needs at least one member")
        JURY_BY_NAME["samples"].check(self.samples)
        JURY_BY_NAME["aggregate"].check(self.aggregate)
        names = self.names
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ParameterError(f"the judge panel names {', '.join(twice)} twice (same model, same endpoint)")
        if not self.plain and any(m.batch for m in self.members):
            raise ParameterError("--batch cannot be combined with --samples or a judge panel yet: run the panel "
                                 "or the samples directly (without --batch)")

    @classmethod
    def of(cls, judge: JudgeSettings, *, samples: int = 1, models: Sequence[str] = (),
           aggregate: str | None = None) -> "Jury":
        """``judge`` plus one member per name in ``models`` on the same endpoint, key and settings."""
        JURY_BY_NAME["models"].check(tuple(models))
        extra = [replace(judge, model=m) for m in dict.fromkeys(str(m).strip() for m in models) if m != judge.model]
        return cls((judge, *extra), samples, aggregate)

    @property
    def lead(self) -> JudgeSettings:
        return self.members[0]

    @property
    def plain(self) -> bool:
        """One member asked once: an ordinary run."""
        return len(self.members) == 1 and self.samples == 1

    @property
    def names(self) -> list[str]:
        """Each member's name as its votes carry it."""
        models = [m.model for m in self.members]
        return [m.model if models.count(m.model) == 1 else f"{m.model}@{m.endpoint}" for m in self.members]

    def sample_key(self, sample: int) -> int | None:
        """What enters the cache key of a sample's asks: None for a plain run (its keys never change)."""
        return None if self.samples == 1 and sample == 0 else sample

    def public(self) -> dict[str, Any]:
        """What a run stores about its panel (never a key)."""
        return {"samples": self.samples, "aggregate": self.aggregate,
                "panel": [{"name": n, "api_key_env": self.key_var(i)} | m.public()
                          for i, (n, m) in enumerate(zip(self.names, self.members))]}

    def key_var(self, index: int) -> str | None:
        return self.key_vars[index] if index < len(self.key_vars) else None

    def fingerprint(self) -> dict[str, Any]:
        """What the panel adds to the judge's fingerprint; nothing for a plain run (its fingerprint stays)."""
        if self.plain:
            return {}
        return {"samples": self.samples, "aggregate": self.aggregate or "by output type",
                "panel": [f"{n} {sorted(m.fingerprint().items())}" if i else n
                          for i, (n, m) in enumerate(zip(self.names, self.members))]}

    def repeats(self) -> str | None:
        """What to warn of when every sample would be one reply (several samples at temperature 0), else None."""
        if self.samples > 1 and any(m.temperature == 0 for m in self.members):
            return (f"{self.samples} samples at temperature 0: a deterministic judge gives every sample the same "
                    "reply (set a temperature above 0 to see how stable its verdicts are)")
        return None

    def warn_if_repeats(self) -> None:
        """Say :meth:`repeats` on stderr."""
        if (warning := self.repeats()) is not None:
            print(f"warning: {warning}", file=sys.stderr)

def restore(stored: Mapping[str, Any] | None, lead: JudgeSettings) -> Jury | None:
    """The panel a run stored (``runs.judge['jury']``), its lead's key and settings taken from ``lead``; None
    when the run stored none. A member's own key comes from the variable it names (``api_key_env``)."""
    if not stored:
        return None
    members, key_vars = [lead], [None]
    for i, member in enumerate((stored.get("panel") or [])[1:]):
        known = {k: v for k, v in member.items() if k in lead.public() and k not in ("max_calls", "max_cost")}
        var = member.get("api_key_env")
        where = f"panel member {i + 1} ({member.get('name') or known.get('model')})"
        key = member_key(where, var, str(known.get("base_url") or lead.base_url), lead)
        members.append(JudgeSettings(**(known | {"api_key": key})))
        key_vars.append(var)
    return Jury(tuple(members), int(stored.get("samples") or 1), stored.get("aggregate"), tuple(key_vars))


#: An environment variable's name; only one in capitals (the convention) is ever quoted back, since a key
#: typed where its variable's name belongs would otherwise be printed.
_VAR_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SHOWN_NAME = re.compile(r"[A-Z_][A-Z0-9_]{0,63}")


def member_key(where: str, var: Any, base_url: str, lead: JudgeSettings) -> str:
    """The key a panel member sends: from the variable ``api_key_env`` names (``""``: no key, for an endpoint
    that needs none); without one, the lead's key, but only on the lead's host -- a key goes to the endpoint
    it belongs to. Refused (ParameterError, naming the member and never a key) otherwise."""
    if var is None:
        if _origin(base_url) != _origin(lead.base_url):
            raise ParameterError(
                f"{where}: its endpoint is on another host or port ({_origin(base_url)}) than the lead judge's "
                f"({_origin(lead.base_url)}), and the lead's key is sent to the lead's host only: set 'api_key_env' "
                "to the name of the variable holding this member's key (or to \"\" for an endpoint that needs none)")
        return lead.api_key
    if not isinstance(var, str):
        raise ParameterError(f"{where}: 'api_key_env' must be the name of an environment variable")
    if var == "":
        return ""
    if not _VAR_NAME.fullmatch(var):
        raise ParameterError(f"{where}: 'api_key_env' must be the NAME of an environment variable (letters, digits "
                             "and _), not a key: put the key in a variable and name that (the value is not shown)")
    if var not in os.environ:
        named = var if _SHOWN_NAME.fullmatch(var) else "named in 'api_key_env' (not shown: it is not in capitals, " \
                                                        "so it may be a key typed in place of a name)"
        raise ParameterError(f"{where}: its key variable {named} is not set: set it, or name another")
    return os.environ[var].strip()


def _origin(url: str) -> str:
    """scheme://host:port of ``url`` (ports made explicit), the unit a key belongs to."""
    parts = urlsplit(str(url).strip())
    try:
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme.lower())
    except ValueError:
        port = None
    return f"{parts.scheme.lower()}://{(parts.hostname or '').lower()}:{port}"


#: Keys of a panel file's ``[[member]]`` table -> JudgeSettings fields.
_MEMBER_KEYS = {"model": "model", "base_url": "base_url", "price_prompt": "price_prompt_per_million",
                "price_completion": "price_completion_per_million", "temperature": "temperature"}


def read_panel(path: str, lead: JudgeSettings, *, samples: int | None = None, models: Sequence[str] = (),
               aggregate: str | None = None) -> Jury:
    """A panel from a TOML file: ``lead`` (the run's judge), then each ``[[member]]`` (``model``; optionally
    ``base_url``, ``api_key_env``, ``price_prompt``, ``price_completion``, ``temperature``; the rest of the
    lead's settings), then ``models`` on the lead's endpoint. Top-level ``samples`` and ``aggregate`` unless
    given here. A bad file is one ParameterError naming the file and the key."""
    try:
        raw = tomllib.loads(read_small_file(path, "panel file").decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ParameterError(f"{path}: the panel file is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ParameterError(f"{path}: not valid TOML ({exc})") from None
    unknown = sorted(set(raw) - {"samples", "aggregate", "member"})
    if unknown:
        raise ParameterError(f"{path}: '{unknown[0]}' is not a panel key (samples, aggregate, [[member]])")
    members, key_vars = [lead], [None]
    for i, member in enumerate(raw.get("member") or []):
        where = f"{path}: member {i + 1}"
        if not isinstance(member, dict) or not isinstance(member.get("model"), str):
            raise ParameterError(f"{where}: 'model' is missing (the judge model's name)")
        bad = sorted(set(member) - set(_MEMBER_KEYS) - {"api_key_env"})
        if bad:
            raise ParameterError(f"{where}: '{bad[0]}' is not a member key ({', '.join([*_MEMBER_KEYS, 'api_key_env'])})")
        var = member.get("api_key_env")
        values = {_MEMBER_KEYS[k]: v for k, v in member.items() if k in _MEMBER_KEYS}
        try:
            made = replace(lead, **values)
        except (ParameterError, TypeError) as exc:
            raise ParameterError(f"{where}: {exc}") from None
        made = replace(made, api_key=member_key(f"{where} ({made.model})", var, made.base_url, lead))
        if (made.model, made.endpoint) != (lead.model, lead.endpoint):  # the run's judge leads the panel already
            members.append(made)
            key_vars.append(var)
    for name in models:
        members.append(replace(lead, model=str(name).strip()))
        key_vars.append(None)
    try:
        # the file's number as written: 2.5 or inf is refused by the samples setting, never rounded to 2
        return Jury(tuple(members), samples if samples is not None else raw.get("samples", 1),
                    aggregate if aggregate is not None else raw.get("aggregate"), tuple(key_vars))
    except (ParameterError, ValueError, TypeError) as exc:
        raise ParameterError(f"{path}: {exc}") from None
