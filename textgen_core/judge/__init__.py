"""The LLM judge: settings, the client (retries, concurrency, structured output, cache, tokens).

Public API: :class:`JudgeSettings`, :class:`JudgeClient`, :class:`JudgeReply`,
:class:`Usage`, :class:`Unscored` and :class:`RetryPolicy`. Everything else in
this package is internal.

The names load on first use: importing a judge metric's declaration (to list
metrics, or to check a run's plan) does not import the client, openai and aiohttp.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

#: Public name -> the module that defines it.
_WHERE = {"JudgeClient": ".client", "JudgeReply": ".client", "Unscored": ".client", "Usage": ".client",
          "RetryPolicy": "..llm.retry", "JudgeSettings": ".settings"}

__all__ = ["JudgeClient", "JudgeReply", "JudgeSettings", "RetryPolicy", "Unscored", "Usage"]


def __getattr__(name: str) -> Any:
    """Load a public name from its module the first time it is used."""
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(_WHERE[name], __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))
