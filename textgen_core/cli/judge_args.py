"""Judge flags shared by every subcommand that may call a judge.

The API key is never a flag: ``--judge-api-key-env`` names the environment
variable that holds it, so keys stay out of shell history and process lists.
"""

from __future__ import annotations

import argparse
import os
from typing import Any, Mapping

from ..errors import ParameterError
from ..judge.settings import (DEFAULT_BASE_URL, ENV_API_KEY, ENV_OPENAI_API_KEY, JURY_SETTINGS, SETTINGS,
                              JudgeSettings, Setting)

_TYPES = {"str": str, "int": int, "float": float}
#: flag destination -> JudgeSettings field, for every setting that has a flag
_FIELDS = {s.dest: s.name for s in SETTINGS if s.dest}
#: flag destination -> jury setting, for every row of the jury table
_JURY_FIELDS = {s.dest: s.name for s in JURY_SETTINGS if s.dest}


def add_judge_arguments(parser: argparse.ArgumentParser, *, panel: bool = True, skip: frozenset[str] = frozenset()
                        ) -> None:
    """Add the judge flag group, one flag per row of the settings table (but the settings named in ``skip``);
    unset flags fall back to the environment, then to defaults. ``panel``: the panel group too."""
    group = parser.add_argument_group("judge", "an OpenAI-compatible endpoint (OpenAI, Azure OpenAI, vLLM, "
                                      "Ollama, llama.cpp server)")
    for s in SETTINGS:
        if s.name not in skip:
            _add(group, s)
    group.add_argument("--judge-api-key-env", metavar="VAR",
                       help=f"name of the environment variable holding the API key "
                            f"(default: ${ENV_API_KEY}, else ${ENV_OPENAI_API_KEY}); never pass a key itself")
    if not panel:
        return
    jury = parser.add_argument_group("repeated judging and judge panels", "every judge request asked of every "
                                      "member, N times; each answer is a vote, the cell their mean or majority")
    for s in JURY_SETTINGS:
        _add(jury, s)


def _add(group: Any, s: Setting) -> None:
    """The flag of one row of a settings table (none for a row without one); unset, it is None."""
    if s.flag is None:
        return
    if s.kind == "bool":
        group.add_argument(s.flag, action="store_true", default=None, help=_help(s))
    elif s.kind == "names":
        group.add_argument(s.flag, action="append", default=None, metavar=s.metavar, help=_help(s))
    elif s.choices:
        group.add_argument(s.flag, choices=s.choices, help=_help(s))
    else:
        group.add_argument(s.flag, type=_TYPES[s.kind], metavar=s.metavar, help=_help(s))


def _help(s: Setting) -> str:
    # argparse formats help with %: a literal % in a help text must be doubled
    return f"{s.help} (default: {s.default_text()})".replace("%", "%%")


def _api_key(args: argparse.Namespace) -> str | None:
    """The key from the variable ``--judge-api-key-env`` names; None when the flag is not given."""
    key_var = getattr(args, "judge_api_key_env", None)
    if not key_var:
        return None
    if key_var.startswith(("sk-", "Bearer ")) or key_var not in os.environ and len(key_var) > 40:
        raise ParameterError("--judge-api-key-env takes the NAME of an environment variable, not a key")
    if key_var not in os.environ:
        raise ParameterError(f"--judge-api-key-env: the environment variable {key_var} is not set")
    return os.environ[key_var]


def judge_settings_for_resume(args: argparse.Namespace, stored: Mapping[str, Any] | None) -> JudgeSettings | None:
    """The judge of a resumed run: the settings the run stored, with the flags given now on top.

    The endpoint and model need not be given again; the key comes from ``--judge-api-key-env`` or the
    usual variables (it is never stored). Spending caps are not carried over: a resume is where a
    stopped run gets a higher cap, or none. Without stored settings this is :func:`judge_settings_from_args`.
    """
    if not stored or not stored.get("model"):
        return judge_settings_from_args(args)
    known = {s.name for s in SETTINGS if s.resumed}  # not the key (never stored), not the caps (given anew)
    values = {name: value for name, value in stored.items() if name in known}
    values |= {field: value for dest, field in _FIELDS.items() if (value := getattr(args, dest, None)) is not None}
    key = _api_key(args)
    if key is None:
        key = os.environ.get(ENV_API_KEY) or os.environ.get(ENV_OPENAI_API_KEY) or ""
    return JudgeSettings(api_key=key.strip(), **values)


def judge_settings_from_args(args: argparse.Namespace, skip: frozenset[str] = frozenset()) -> JudgeSettings | None:
    """Judge settings from parsed flags and the environment (the settings in ``skip`` have no flag here: a flag
    of the same name means something else); None when no judge model is configured."""
    overrides = {field: getattr(args, dest, None) for dest, field in _FIELDS.items() if field not in skip}
    key = _api_key(args)
    if key is not None:
        overrides["api_key"] = key
    settings = JudgeSettings.from_env(**overrides)
    if settings is not None and settings.api_version and settings.endpoint == DEFAULT_BASE_URL:
        raise ParameterError("--judge-api-version is for Azure OpenAI: give the resource endpoint with "
                             "--judge-base-url (https://NAME.openai.azure.com)")
    return settings


def jury_from_args(args: argparse.Namespace, judge: JudgeSettings | None) -> Any | None:
    """The panel and samples the flags ask for (a :class:`~textgen_core.runs.panel.Jury`); None when no flag
    of the group is given (one judge, asked once; a resume then keeps the run's own panel)."""
    given = {name: getattr(args, dest, None) for dest, name in _JURY_FIELDS.items()}
    if all(value is None for value in given.values()):
        return None
    samples, models, path, aggregate = given["samples"], given["models"] or [], given["panel"], given["aggregate"]
    if judge is None:
        raise ParameterError("--samples and judge panels need a judge: give --judge-base-url and --judge-model")
    from ..runs.panel import Jury, read_panel

    jury = read_panel(path, judge, samples=samples, models=models, aggregate=aggregate) if path is not None \
        else Jury.of(judge, samples=1 if samples is None else samples, models=models, aggregate=aggregate)
    jury.warn_if_repeats()
    return jury
