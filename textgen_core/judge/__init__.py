"""The LLM judge: settings, the client (retries, concurrency, structured output, cache, tokens).

Public API: :class:`JudgeSettings`, :class:`JudgeClient`, :class:`JudgeReply`,
:class:`Usage`, :class:`Unscored` and :class:`RetryPolicy`. Everything else in
this package is internal.
"""

from .client import JudgeClient, JudgeReply, Unscored, Usage
from ..llm.retry import RetryPolicy
from .settings import JudgeSettings

__all__ = ["JudgeClient", "JudgeReply", "JudgeSettings", "RetryPolicy", "Unscored", "Usage"]
