"""Judge flags shared by every subcommand that may call a judge.

The API key is never a flag: ``--judge-api-key-env`` names the environment
variable that holds it, so keys stay out of shell history and process lists.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import fields
from typing import Any, Mapping

from ..errors import ParameterError
from ..judge.settings import (DEFAULT_BASE_URL, ENV_API_KEY, ENV_BASE_URL, ENV_MODEL, ENV_OPENAI_API_KEY,
                              RESPONSE_MODES, SETTING_HELP, JudgeSettings)

#: flag destination -> JudgeSettings field
_FIELDS = {
    "judge_base_url": "base_url",
    "judge_model": "model",
    "judge_embedding_model": "embedding_model",
    "temperature": "temperature",
    "seed": "seed",
    "max_tokens": "max_tokens",
    "timeout": "timeout",
    "concurrency": "concurrency",
    "retries": "retries",
    "price_prompt": "price_prompt_per_million",
    "price_completion": "price_completion_per_million",
    "rpm": "rpm",
    "tpm": "tpm",
    "judge_api_version": "api_version",
    "batch": "batch",
    "batch_discount": "batch_discount",
    "batch_poll": "batch_poll",
    "batch_wait": "batch_wait",
    "max_cost": "max_cost",
    "max_calls": "max_calls",
    "judge_response_mode": "response_mode",
}


def add_judge_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the judge flag group; unset flags fall back to the environment, then to defaults."""
    defaults = JudgeSettings(base_url="-", model="-")
    group = parser.add_argument_group("judge", "an OpenAI-compatible endpoint (OpenAI, Azure OpenAI, vLLM, "
                                      "Ollama, llama.cpp server)")
    group.add_argument("--judge-base-url", metavar="URL",
                       help=f"endpoint base URL (default: ${ENV_BASE_URL}, else https://api.openai.com/v1)")
    group.add_argument("--judge-model", metavar="NAME", help=f"judge model (default: ${ENV_MODEL}); no model, no judge")
    group.add_argument("--judge-embedding-model", metavar="NAME",
                       help="model for embeddings when it differs from the judge model")
    group.add_argument("--judge-api-key-env", metavar="VAR",
                       help=f"name of the environment variable holding the API key "
                            f"(default: ${ENV_API_KEY}, else ${ENV_OPENAI_API_KEY}); never pass a key itself")
    group.add_argument("--concurrency", type=int, metavar="N",
                       help=f"judge requests in flight at once (default: {defaults.concurrency})")
    group.add_argument("--temperature", type=float, metavar="T",
                       help=f"judge sampling temperature (default: {defaults.temperature:g})")
    group.add_argument("--seed", type=int, metavar="N", help="judge sampling seed (default: none)")
    group.add_argument("--max-tokens", type=int, metavar="N",
                       help=f"longest judge reply in tokens (default: {defaults.max_tokens})")
    group.add_argument("--timeout", type=float, metavar="SECONDS",
                       help=f"seconds to wait for one judge reply (default: {defaults.timeout:g})")
    group.add_argument("--retries", type=int, metavar="N",
                       help=f"retries of failed requests and re-asks of invalid replies (default: {defaults.retries})")
    group.add_argument("--price-prompt", type=float, metavar="USD",
                       help="price per million prompt tokens, for cost estimates")
    group.add_argument("--price-completion", type=float, metavar="USD",
                       help="price per million completion tokens, for cost estimates")
    group.add_argument("--judge-response-mode", choices=RESPONSE_MODES,
                       help=f"{SETTING_HELP['response_mode']} (default: {defaults.response_mode})")
    group.add_argument("--judge-api-version", metavar="VERSION",
                       help="Azure OpenAI: the api-version (e.g. 2024-10-21); --judge-base-url is then the resource "
                            "endpoint (https://NAME.openai.azure.com) and --judge-model the deployment name")
    group.add_argument("--rpm", type=int, metavar="N",
                       help="requests per minute the endpoint allows (default: learned from its rate-limit headers)")
    group.add_argument("--tpm", type=int, metavar="N",
                       help="tokens per minute the endpoint allows (default: learned from its rate-limit headers)")
    group.add_argument("--max-cost", type=float, metavar="USD",
                       help="stop before the judge cost of the run exceeds USD (needs --price-prompt/--price-completion); "
                            "the run is interrupted with 'budget reached' and 'resume' finishes it")
    group.add_argument("--max-calls", type=int, metavar="N",
                       help="stop before the run makes more than N judge calls ('resume' finishes it)")
    group.add_argument("--batch", action="store_true", default=None,
                       help="send judge requests through the OpenAI Batch API (half price; replies may take up to "
                            "24 h; a killed run resumes its batches)")
    group.add_argument("--batch-discount", type=float, metavar="FACTOR",
                       help=f"batch price as a share of the direct price (default: {defaults.batch_discount:g})")
    group.add_argument("--batch-poll", type=float, metavar="SECONDS",
                       help=f"seconds before the first batch status check, growing to 60 (default: {defaults.batch_poll:g})")
    group.add_argument("--batch-wait", type=float, metavar="SECONDS",
                       help=f"{SETTING_HELP['batch_wait']} (default: {defaults.batch_wait:g})")
    panel = parser.add_argument_group("repeated judging and judge panels", "every judge request asked of every "
                                      "member, N times; each answer is a vote, the cell their mean or majority")
    panel.add_argument("--samples", type=int, metavar="N",
                       help="ask each judge request N times (use --temperature above 0); the cell is the votes' "
                            "mean (ratings, shares) or majority (labels), and keeps their spread (default: 1)")
    panel.add_argument("--jury-model", action="append", default=None, metavar="NAME",
                       help="add a judge model to the panel, on the same endpoint and key as --judge-model "
                            "(repeatable)")
    panel.add_argument("--jury-panel", metavar="FILE",
                       help="a TOML panel: [[member]] tables with model, and optionally base_url, api_key_env, "
                            "price_prompt, price_completion; top-level samples and aggregate")
    panel.add_argument("--jury-aggregate", choices=["mean", "majority"], default=None,
                       help="how a cell combines its votes (default: majority for label and yes/no metrics, "
                            "mean for the rest)")


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
    known = {f.name for f in fields(JudgeSettings)} - {"api_key", "max_calls", "max_cost"}  # caps: given anew
    values = {name: value for name, value in stored.items() if name in known}
    values |= {field: value for dest, field in _FIELDS.items() if (value := getattr(args, dest, None)) is not None}
    key = _api_key(args)
    if key is None:
        key = os.environ.get(ENV_API_KEY) or os.environ.get(ENV_OPENAI_API_KEY) or ""
    return JudgeSettings(api_key=key.strip(), **values)


def judge_settings_from_args(args: argparse.Namespace) -> JudgeSettings | None:
    """Judge settings from parsed flags and the environment; None when no judge model is configured."""
    overrides = {field: getattr(args, dest, None) for dest, field in _FIELDS.items()}
    key = _api_key(args)
    if key is not None:
        overrides["api_key"] = key
    settings = JudgeSettings.from_env(**overrides)
    if settings is not None and settings.api_version and settings.endpoint == DEFAULT_BASE_URL:
        raise ParameterError("--judge-api-version is for Azure OpenAI: give the resource endpoint with "
                             "--judge-base-url (https://NAME.openai.azure.com)")
    return settings


def jury_from_args(args: argparse.Namespace, judge: JudgeSettings | None) -> Any | None:
    """The panel and samples the flags ask for (a :class:`~textgen_core.judge.panel.Jury`); None when no flag
    of the group is given (one judge, asked once; a resume then keeps the run's own panel)."""
    samples, models = getattr(args, "samples", None), getattr(args, "jury_model", None) or []
    path, aggregate = getattr(args, "jury_panel", None), getattr(args, "jury_aggregate", None)
    if samples is None and not models and path is None and aggregate is None:
        return None
    if judge is None:
        raise ParameterError("--samples and judge panels need a judge: give --judge-base-url and --judge-model")
    from ..judge.panel import Jury, read_panel

    if path is not None:
        return read_panel(path, judge, samples=samples, models=models, aggregate=aggregate)
    return Jury.of(judge, samples=1 if samples is None else samples, models=models, aggregate=aggregate)
