"""Judge settings: which endpoint and model, how to sample, how hard to retry, what it costs.

Every setting is one row of :data:`SETTINGS` (name, type, default, help, bounds or choices, whether it
is part of the judge's fingerprint, its CLI flag, where the dashboard form shows it). The dataclass
fields and their validation, the CLI options (``cli/judge_args.py``), the dashboard's judge form and
the README's settings table are all generated from that table: adding a setting is one row. The
settings of repeated judging and panels (:class:`~textgen_core.runs.panel.Jury`) are rows of :data:`JURY_SETTINGS`,
read by the same machinery.

The API key is held here so that one object configures a client, but it is excluded from ``repr`` and
from :meth:`JudgeSettings.public`, which is the only form that is ever stored (``runs.judge``) or shown.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Mapping

from ..errors import ParameterError
from ..llm.accounting import Usage

if TYPE_CHECKING:
    from ..llm.retry import RetryPolicy

#: Environment variables read by :meth:`JudgeSettings.from_env`.
ENV_BASE_URL = "TEXTGEN_EVAL_JUDGE_BASE_URL"
ENV_MODEL = "TEXTGEN_EVAL_JUDGE_MODEL"
ENV_API_KEY = "TEXTGEN_EVAL_JUDGE_API_KEY"
ENV_EMBEDDING_MODEL = "TEXTGEN_EVAL_JUDGE_EMBEDDING_MODEL"
ENV_OPENAI_API_KEY = "OPENAI_API_KEY"
DEFAULT_BASE_URL = "https://api.openai.com/v1"

#: Accepted values of ``response_mode``.
RESPONSE_MODES = ("auto", "json_schema", "json_object", "text")

#: A setting with no default: it must be given.
REQUIRED: Any = object()

#: Accepted values of a panel's ``aggregate`` (how a cell combines its votes).
AGGREGATES = ("mean", "majority")
#: Most samples a cell may be asked (each one is a paid request).
MAX_SAMPLES = 100

#: "names": a list of names (a repeatable flag; comma-separated in the dashboard).
Kind = Literal["str", "int", "float", "bool", "names"]
#: Where the dashboard shows a setting: the judge form's endpoint column, its sampling/price column, the two
#: columns of its "real endpoints" expander, or the panel row on Evaluate; None: not shown (a stored run's
#: value, else the default, is used).
Place = Literal["endpoint", "sampling", "limits", "caps", "jury"] | None


@dataclass(frozen=True)
class Setting:
    """One judge setting, declared once."""

    name: str
    kind: Kind
    default: Any
    help: str
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] = ()
    #: part of the judge fingerprint (a resume with another value is refused): True, False, or "if-set"
    #: (only when it differs from its default, so that runs stored before the setting existed keep their fingerprint)
    fingerprint: bool | Literal["if-set"] = False
    flag: str | None = None  # the CLI option; None: not a flag (the key: --judge-api-key-env names its variable)
    metavar: str | None = None
    env: str | None = None  # the environment variable it falls back to
    label: str = ""  # the dashboard's label
    place: Place = None
    resumed: bool = True  # a resumed run reuses the stored value (caps are given anew)
    secret: bool = False  # never stored, never shown
    default_words: str = ""  # the default in words when it is not a value (None: decided per metric)

    @property
    def dest(self) -> str | None:
        """The argparse destination of the flag."""
        return None if self.flag is None else self.flag.lstrip("-").replace("-", "_")

    def default_text(self) -> str:
        """The default in words, for help texts and the README."""
        if self.default_words:
            return self.default_words
        if self.env:
            fallback = {"base_url": DEFAULT_BASE_URL, "api_key": f"${ENV_OPENAI_API_KEY}"}.get(self.name, "none")
            return f"${self.env}, else {fallback}"
        if self.default in (None, ()) or self.default is REQUIRED:
            return "none"
        return f"{self.default:g}" if self.kind == "float" else str(self.default).lower() \
            if self.kind == "bool" else str(self.default)

    def accepted(self) -> str:
        """The values it accepts, in words."""
        if self.choices:
            return " / ".join(self.choices)
        if self.kind == "names":
            return "names (repeatable)"
        if self.kind in ("int", "float"):
            low, high = self.low, self.high
            word = "integer" if self.kind == "int" else "number"
            if low is None:
                return f"any {word}"
            return f"{word} ≥ {low:g}" if high is None or math.isinf(high) else f"{word} {low:g} to {high:g}"
        return "true / false" if self.kind == "bool" else "text"

    def check(self, value: Any) -> None:
        """Raise one clear error naming the setting and its bound."""
        if value is None and self.default is None:
            return
        if self.kind == "str":
            if self.default is REQUIRED and not str(value).strip():
                raise ParameterError(f"judge {self.name} is empty")
            if self.choices and value not in self.choices:
                raise ParameterError(f"judge setting {self.name}={value!r} must be one of {', '.join(self.choices)}")
        elif self.kind == "bool":
            if not isinstance(value, bool):
                raise ParameterError(f"judge setting {self.name}={value!r} must be true or false")
        elif self.kind == "names":
            if isinstance(value, str) or not all(isinstance(v, str) and v.strip() for v in value):
                raise ParameterError(f"judge setting {self.name}={value!r} must be a list of non-empty names")
        elif self.kind == "int":
            high = math.inf if self.high is None else self.high
            if isinstance(value, bool) or not isinstance(value, int) or (self.low is not None and value < self.low) \
                    or value > high:
                bound = f" >= {self.low:g}" if self.low is not None and math.isinf(high) else \
                    f" from {self.low:g} to {high:g}" if self.low is not None else ""
                raise ParameterError(f"judge setting {self.name}={value!r} must be an integer{bound}")
        else:
            low = -math.inf if self.low is None else self.low
            high = math.inf if self.high is None else self.high
            if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value) \
                    or not low <= value <= high:
                raise ParameterError(f"judge setting {self.name}={value!r} must be a number between {low:g} "
                                     f"and {high:g}")


S = Setting
INF = math.inf
#: Every judge setting, in the dataclass's field order. One row per setting; everything else is generated.
SETTINGS: tuple[Setting, ...] = (
    S("base_url", "str", REQUIRED, "OpenAI-compatible endpoint, e.g. https://api.openai.com/v1 or http://localhost:8000/v1 (vLLM)", fingerprint=True, flag="--judge-base-url", metavar="URL", env=ENV_BASE_URL, label="Base URL", place="endpoint"),
    S("model", "str", REQUIRED, "judge model name as the endpoint knows it; no model, no judge", fingerprint=True, flag="--judge-model", metavar="NAME", env=ENV_MODEL, label="Judge model", place="endpoint"),
    S("api_key", "str", "", "API key; read from an environment variable (--judge-api-key-env names it) or typed into the dashboard, never stored", env=ENV_API_KEY, label="API key", place="endpoint", resumed=False, secret=True),
    S("temperature", "float", 0.0, "sampling temperature; 0 makes verdicts repeatable and cacheable", 0.0, 2.0, fingerprint=True, flag="--temperature", metavar="T", label="Temperature", place="sampling"),
    S("seed", "int", None, "sampling seed sent to endpoints that honour it", fingerprint=True, flag="--seed", metavar="N", label="Seed", place="sampling"),
    S("max_tokens", "int", 1024, "upper bound on the tokens of one judge reply", 1, flag="--max-tokens", metavar="N"),
    S("timeout", "float", 60.0, "seconds to wait for one HTTP reply before retrying", 0.001, 3600.0, flag="--timeout", metavar="SECONDS"),
    S("concurrency", "int", 16, "judge requests in flight at once for this endpoint and model", 1, flag="--concurrency", metavar="N", label="Concurrency", place="sampling"),
    S("retries", "int", 4, "retries of a failed request, and re-asks of an invalid reply", 0, flag="--retries", metavar="N"),
    S("backoff", "float", 0.5, "seconds before the first retry of a failed request, doubling per retry up to 30 s, jittered; an endpoint's Retry-After wins", 0.001, 600.0, flag="--backoff", metavar="SECONDS"),
    S("price_prompt_per_million", "float", None, "price in USD of one million prompt tokens, for cost estimates", 0.0, INF, flag="--price-prompt", metavar="USD", label="Price per 1M prompt tokens", place="sampling"),
    S("price_completion_per_million", "float", None, "price in USD of one million completion tokens, for cost estimates", 0.0, INF, flag="--price-completion", metavar="USD", label="Price per 1M completion tokens", place="sampling"),
    S("embedding_model", "str", None, "model for /embeddings when it differs from the judge model", fingerprint=True, flag="--judge-embedding-model", metavar="NAME", env=ENV_EMBEDDING_MODEL, label="Embedding model", place="endpoint"),
    S("rpm", "int", None, "requests per minute the endpoint allows (paced before it refuses); none: learned from its rate-limit headers", 1, flag="--rpm", metavar="N", label="Requests per minute", place="limits"),
    S("tpm", "int", None, "tokens per minute the endpoint allows; none: learned from its rate-limit headers", 1, flag="--tpm", metavar="N", label="Tokens per minute", place="limits"),
    S("api_version", "str", None, "Azure OpenAI api-version (e.g. 2024-10-21); set for an Azure deployment: the base URL is then the resource endpoint (https://NAME.openai.azure.com) and the model the deployment name", fingerprint=True, flag="--judge-api-version", metavar="VERSION", label="Azure api-version", place="limits"),
    S("batch", "bool", False, "send requests through the OpenAI Batch API (half price, replies within 24 h; a killed run resumes its batches) instead of one by one", flag="--batch", label="Batch API (half price, slower)", place="caps"),
    S("batch_discount", "float", 0.5, "price factor of batch requests against direct ones (OpenAI: 0.5)", 0.0, 1.0, flag="--batch-discount", metavar="FACTOR"),
    S("batch_poll", "float", 5.0, "seconds before the first batch status check (grows to 60 s)", 0.001, 3600.0, flag="--batch-poll", metavar="SECONDS"),
    S("batch_settle", "float", 0.5, "seconds with no new request before a batch round goes out (raise it if a large run's requests take longer to gather: stragglers wait for the next round)", 0.001, 600.0, flag="--batch-settle", metavar="SECONDS"),
    S("batch_wait", "float", 90_000.0, "seconds to wait for one batch before the run stops interrupted (the batch keeps running; resume takes it over)", 0.001, 7 * 86400.0, flag="--batch-wait", metavar="SECONDS"),
    S("max_cost", "float", None, "stop the run before its judge cost exceeds this many USD (needs the prices); resume finishes it", 0.0, INF, flag="--max-cost", metavar="USD", label="Stop at cost (USD)", place="caps", resumed=False),
    S("max_calls", "int", None, "stop the run before it makes more judge calls than this; resume finishes it", 0, flag="--max-calls", metavar="N", label="Stop at judge calls", place="caps", resumed=False),
    S("response_mode", "str", "auto", "structured output: auto (json_schema, falling back to json_object, then text), or one of json_schema, json_object, text, used without fallback", choices=RESPONSE_MODES, fingerprint=True, flag="--judge-response-mode", label="Structured output", place="caps"),
)
BY_NAME: Mapping[str, Setting] = {s.name: s for s in SETTINGS}

#: Repeated judging and judge panels: who else judges, how often, how the votes combine (:class:`~textgen_core.runs.panel.Jury`).
#: One row per setting, like :data:`SETTINGS`: the CLI flags, the checks, the Evaluate form and the README follow.
JURY_SETTINGS: tuple[Setting, ...] = (
    S("samples", "int", 1, "ask every judge request N times (set a temperature above 0 to see how stable the verdicts are); the cell is the votes' mean (ratings, shares) or majority (labels, yes/no) and keeps their spread; each sample is a paid call", 1, MAX_SAMPLES, fingerprint="if-set", flag="--samples", metavar="N", label="Samples per judge request", place="jury"),
    S("models", "names", (), "more judge models on the judge's endpoint and key; each judges every cell, the cell is the panel's mean or majority, and the summary shows each member and their agreement", fingerprint="if-set", flag="--jury-model", metavar="NAME", label="Panel members (more judge models on the same endpoint, comma-separated)", place="jury"),
    S("panel", "str", None, "a TOML panel file: [[member]] tables with model and optionally base_url, api_key_env, price_prompt, price_completion, temperature; top-level samples and aggregate", fingerprint="if-set", flag="--jury-panel", metavar="FILE"),
    S("aggregate", "str", None, "how a cell combines its votes (with samples above 1 or a panel)", choices=AGGREGATES, fingerprint="if-set", flag="--jury-aggregate", label="Panel cell", place="jury", default_words="majority for label and yes/no metrics, mean for the rest"),
)
JURY_BY_NAME: Mapping[str, Setting] = {s.name: s for s in JURY_SETTINGS}

#: How a fingerprinted value is compared: the endpoint without its trailing slash, the embedding model it falls
#: back to, the temperature as a float (1 and 1.0 are one judge).
_FINGERPRINT_FORM = {"base_url": lambda s: s.endpoint, "embedding_model": lambda s: s.embedding_model or s.model,
                     "temperature": lambda s: float(s.temperature)}


def _declared(cls: type) -> type:
    """Make ``cls`` a frozen dataclass whose fields are the rows of :data:`SETTINGS`."""
    annotations = {"str": "str", "int": "int", "float": "float", "bool": "bool"}
    cls.__annotations__ = {s.name: annotations[s.kind] + (" | None" if s.default is None else "") for s in SETTINGS}
    for s in SETTINGS:
        if s.default is not REQUIRED:
            setattr(cls, s.name, field(default=s.default, repr=not s.secret))
    return dataclass(frozen=True)(cls)


@_declared
class JudgeSettings:
    """How to reach and drive one judge model: one field per row of :data:`SETTINGS`, validated on construction."""

    def __post_init__(self) -> None:
        for s in SETTINGS:
            s.check(getattr(self, s.name))
        if self.max_cost is not None and self.price_prompt_per_million is None \
                and self.price_completion_per_million is None:
            raise ParameterError("a cost cap (max_cost) needs the prices per million prompt and completion tokens")

    @property
    def endpoint(self) -> str:
        """The base URL as used in cache keys: no trailing slash."""
        return str(self.base_url).strip().rstrip("/")

    def public(self) -> dict[str, Any]:
        """Every setting except the API key: what runs store and dashboards show."""
        return {s.name: getattr(self, s.name) for s in SETTINGS if not s.secret}

    def fingerprint(self) -> dict[str, Any]:
        """What decides the judge's verdicts (a run keeps it; resume refuses another): the rows marked
        ``fingerprint``. Not ``max_tokens``: a complete reply is the same under any limit it fits, and a reply
        cut off is never used, so a resume may raise it for the cells left unscored."""
        found = {}
        for s in SETTINGS:
            value = getattr(self, s.name)
            if s.fingerprint is True or (s.fingerprint == "if-set" and value != s.default):
                found[s.name] = _FINGERPRINT_FORM[s.name](self) if s.name in _FINGERPRINT_FORM else value
        return found

    def price(self, prompt_tokens: int, completion_tokens: int, *, batch: bool | None = None) -> float | None:
        """Cost of the given tokens at the configured prices (batch prices in batch mode); None when no price is set.

        ``batch`` overrides the mode, e.g. to show direct and batch cost side by side.
        """
        if self.price_prompt_per_million is None and self.price_completion_per_million is None:
            return None
        factor = self.batch_discount if (self.batch if batch is None else batch) else 1.0
        return factor * (prompt_tokens * (self.price_prompt_per_million or 0.0)
                         + completion_tokens * (self.price_completion_per_million or 0.0)) / 1_000_000

    def cost_of(self, used: Usage) -> float | None:
        """What ``used`` cost at these prices, attempts that got no reply at their upper estimate; None without
        prices."""
        return self.price(used.prompt_tokens + used.unanswered_prompt_tokens,
                          used.completion_tokens + used.unanswered_completion_tokens)

    def retry_policy(self) -> RetryPolicy:
        """The retry timing these settings ask for (``backoff`` before the first retry); the one place it is built.
        Imported here: llm.retry imports openai, which the settings' listings (``metrics``, ``--help``) never need."""
        from ..llm.retry import RetryPolicy

        return RetryPolicy(base=self.backoff)

    @classmethod
    def from_env(cls, **overrides: Any) -> "JudgeSettings | None":
        """Settings from ``TEXTGEN_EVAL_JUDGE_*`` variables, with keyword overrides.

        Overrides whose value is None are ignored, so CLI flags can be passed
        through unconditionally. Returns None when no judge model is configured
        (a base URL alone names no judge): the run has no judge. The base URL
        defaults to OpenAI's.
        """
        given = {k: v for k, v in overrides.items() if v is not None}
        unknown = set(given) - set(BY_NAME)
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


def settings_markdown() -> str:
    """The README's table of judge settings, generated from :data:`SETTINGS` and :data:`JURY_SETTINGS`."""
    lines = ["| setting | flag | default | accepts | fingerprint | what it does |", "| --- | --- | --- | --- | --- | --- |"]
    for s in (*SETTINGS, *JURY_SETTINGS):
        flag = f"`{s.flag}`" if s.flag else "–"
        mark = {True: "yes", False: "–", "if-set": "when set"}[s.fingerprint]
        lines.append(f"| `{s.name}` | {flag} | {s.default_text()} | {s.accepted()} | {mark} | {s.help} |")
    return "\n".join(lines) + "\n"
