"""Judge settings: which endpoint and model, how to sample, how hard to retry, what it costs.

Settings are plain data. The API key is held here so that one object configures
a client, but it is excluded from ``repr`` and from :meth:`JudgeSettings.public`,
which is the only form that is ever stored (``runs.judge``) or shown.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, fields
from typing import Any, Mapping

from ..errors import ParameterError

#: Environment variables read by :meth:`JudgeSettings.from_env`.
ENV_BASE_URL = "TEXTGEN_EVAL_JUDGE_BASE_URL"
ENV_MODEL = "TEXTGEN_EVAL_JUDGE_MODEL"
ENV_API_KEY = "TEXTGEN_EVAL_JUDGE_API_KEY"
ENV_EMBEDDING_MODEL = "TEXTGEN_EVAL_JUDGE_EMBEDDING_MODEL"
ENV_OPENAI_API_KEY = "OPENAI_API_KEY"
DEFAULT_BASE_URL = "https://api.openai.com/v1"

#: (name, help) for every setting; the CLI, the dashboard and the docs read this.
SETTING_HELP: Mapping[str, str] = {
    "base_url": "OpenAI-compatible endpoint, e.g. https://api.openai.com/v1 or http://localhost:8000/v1 (vLLM)",
    "model": "judge model name as the endpoint knows it",
    "api_key": "API key; read from an environment variable, never stored",
    "temperature": "sampling temperature; 0 makes verdicts repeatable and cacheable",
    "seed": "sampling seed sent to endpoints that honour it",
    "max_tokens": "upper bound on the tokens of one judge reply",
    "timeout": "seconds to wait for one HTTP reply before retrying",
    "concurrency": "judge requests in flight at once for this endpoint and model",
    "retries": "retries of a failed request, and re-asks of an invalid reply",
    "price_prompt_per_million": "price of one million prompt tokens, for cost estimates",
    "price_completion_per_million": "price of one million completion tokens, for cost estimates",
    "embedding_model": "model for /embeddings when it differs from the judge model",
    "rpm": "requests per minute the endpoint allows (paced before it refuses); empty: learned from its headers",
    "tpm": "tokens per minute the endpoint allows; empty: learned from its headers",
    "api_version": "Azure OpenAI api-version (e.g. 2024-10-21); set for an Azure deployment, whose name is the model",
    "batch": "send requests through the Batch API (half price, replies within 24 h) instead of one by one",
    "batch_discount": "price factor of batch requests against direct ones (OpenAI: 0.5)",
    "batch_poll": "seconds before the first batch status check (grows to 60 s)",
    "batch_wait": "seconds to wait for one batch before the run stops interrupted (the batch keeps running; "
                  "resume takes it over)",
    "max_cost": "stop the run before its judge cost exceeds this many dollars (needs the prices)",
    "max_calls": "stop the run before it makes more judge calls than this",
    "response_mode": "structured output: auto (json_schema, falling back to json_object, then text), or one "
                     "of json_schema, json_object, text, used without fallback",
}

#: Accepted values of ``response_mode``.
RESPONSE_MODES = ("auto", "json_schema", "json_object", "text")


@dataclass(frozen=True)
class JudgeSettings:
    """How to reach and drive one judge model. Validated on construction."""

    base_url: str
    model: str
    api_key: str = field(default="", repr=False)
    temperature: float = 0.0
    seed: int | None = None
    max_tokens: int = 1024
    timeout: float = 60.0
    concurrency: int = 16
    retries: int = 4
    price_prompt_per_million: float | None = None
    price_completion_per_million: float | None = None
    embedding_model: str | None = None
    rpm: int | None = None
    tpm: int | None = None
    api_version: str | None = None
    batch: bool = False
    batch_discount: float = 0.5
    batch_poll: float = 5.0
    batch_wait: float = 90_000.0
    max_cost: float | None = None
    max_calls: int | None = None
    response_mode: str = "auto"

    def __post_init__(self) -> None:
        if self.response_mode not in RESPONSE_MODES:
            raise ParameterError(f"judge setting response_mode={self.response_mode!r} must be one of "
                                 f"{', '.join(RESPONSE_MODES)}")
        if not str(self.base_url).strip():
            raise ParameterError("judge base_url is empty")
        if not str(self.model).strip():
            raise ParameterError("judge model is empty")
        _check_range("temperature", self.temperature, 0.0, 2.0)
        _check_range("timeout", self.timeout, 0.001, 3600.0)
        _check_int("max_tokens", self.max_tokens, 1)
        _check_int("concurrency", self.concurrency, 1)
        _check_int("retries", self.retries, 0)
        if self.seed is not None:
            _check_int("seed", self.seed, None)
        for name in ("price_prompt_per_million", "price_completion_per_million", "max_cost"):
            value = getattr(self, name)
            if value is not None:
                _check_range(name, value, 0.0, math.inf)
        for name in ("rpm", "tpm", "max_calls"):
            if getattr(self, name) is not None:
                _check_int(name, getattr(self, name), 1 if name != "max_calls" else 0)
        _check_range("batch_discount", self.batch_discount, 0.0, 1.0)
        _check_range("batch_poll", self.batch_poll, 0.001, 3600.0)
        _check_range("batch_wait", self.batch_wait, 0.001, 7 * 86400.0)
        if self.max_cost is not None and self.price_prompt_per_million is None \
                and self.price_completion_per_million is None:
            raise ParameterError("a cost cap (max_cost) needs the prices per million prompt and completion tokens")

    def __repr__(self) -> str:  # dataclass repr already hides the key; keep it explicit for subclasses
        shown = ", ".join(f"{k}={v!r}" for k, v in self.public().items())
        return f"JudgeSettings({shown})"

    @property
    def endpoint(self) -> str:
        """The base URL as used in cache keys: no trailing slash."""
        return str(self.base_url).strip().rstrip("/")

    def public(self) -> dict[str, Any]:
        """Every setting except the API key: what runs store and dashboards show."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "api_key"}

    def fingerprint(self) -> dict[str, Any]:
        """What decides the judge's verdicts (a run keeps it; resume refuses another). The key, timeout,
        concurrency, retries, rate limits, prices and caps may change without changing a verdict; so may
        ``max_tokens``: a complete reply is the same under any limit it fits, and a reply cut off is never
        used, so a resume may raise it for the cells left unscored."""
        return {"base_url": self.endpoint, "model": self.model, "temperature": float(self.temperature),
                "seed": self.seed, "embedding_model": self.embedding_model or self.model,
                "response_mode": self.response_mode, "api_version": self.api_version}

    def price(self, prompt_tokens: int, completion_tokens: int, *, batch: bool | None = None) -> float | None:
        """Cost of the given tokens at the configured prices (batch prices in batch mode); None when no price is set.

        ``batch`` overrides the mode, e.g. to show direct and batch cost side by side.
        """
        if self.price_prompt_per_million is None and self.price_completion_per_million is None:
            return None
        factor = self.batch_discount if (self.batch if batch is None else batch) else 1.0
        return factor * (prompt_tokens * (self.price_prompt_per_million or 0.0)
                         + completion_tokens * (self.price_completion_per_million or 0.0)) / 1_000_000

    @classmethod
    def from_env(cls, **overrides: Any) -> "JudgeSettings | None":
        """Settings from ``TEXTGEN_EVAL_JUDGE_*`` variables, with keyword overrides.

        Overrides whose value is None are ignored, so CLI flags can be passed
        through unconditionally. Returns None when no judge model is configured
        (a base URL alone names no judge): the run has no judge. The base URL
        defaults to OpenAI's.
        """
        given = {k: v for k, v in overrides.items() if v is not None}
        unknown = set(given) - {f.name for f in fields(cls)}
        if unknown:
            raise ParameterError(f"unknown judge setting(s): {', '.join(sorted(unknown))}")
        base_url = given.pop("base_url", None) or os.environ.get(ENV_BASE_URL, "").strip()
        model = given.pop("model", None) or os.environ.get(ENV_MODEL, "").strip()
        if not model:
            return None
        api_key = given.pop("api_key", None)
        if api_key is None:
            api_key = os.environ.get(ENV_API_KEY) or os.environ.get(ENV_OPENAI_API_KEY) or ""
        if "embedding_model" not in given and os.environ.get(ENV_EMBEDDING_MODEL):
            given["embedding_model"] = os.environ[ENV_EMBEDDING_MODEL].strip()
        return cls(base_url=base_url or DEFAULT_BASE_URL, model=model, api_key=api_key.strip(), **given)


def _check_range(name: str, value: Any, low: float, high: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) or not low <= value <= high:
        raise ParameterError(f"judge setting {name}={value!r} must be a number between {low:g} and {high:g}")


def _check_int(name: str, value: Any, low: int | None) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or (low is not None and value < low):
        bound = f" >= {low}" if low is not None else ""
        raise ParameterError(f"judge setting {name}={value!r} must be an integer{bound}")
