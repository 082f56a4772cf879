"""Shared pieces of the judge client tests: a verdict schema, a good reply, and ways to ask."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any, Awaitable, Callable

from textgen_core.judge import JudgeClient, JudgeSettings
from textgen_core.llm.retry import FAST_POLICY
from textgen_core.store import Store

VERDICTS = {
    "type": "object",
    "properties": {
        "verdicts": {
            "type": "array", "minItems": 3, "maxItems": 3,
            "items": {
                "type": "object",
                "properties": {"verdict": {"type": "string", "enum": ["yes", "no"]}, "reason": {"type": "string"}},
                "required": ["verdict", "reason"], "additionalProperties": False,
            },
        },
    },
    "required": ["verdicts"], "additionalProperties": False,
}
GOOD = {"verdicts": [{"verdict": "yes", "reason": "r"}] * 3}


def messages(text: str = "Is the sky blue?") -> list[dict]:
    return [{"role": "system", "content": "You are a careful judge."}, {"role": "user", "content": text}]


def run(client: JudgeClient, body: Callable[[], Awaitable[Any]]) -> Any:
    """Run ``body`` in a fresh event loop and close the client's HTTP pool of that loop."""
    async def main() -> Any:
        try:
            return await body()
        finally:
            await client.aclose()
    return asyncio.run(main())


def ask(client: JudgeClient, text: str = "Is the sky blue?", *, version: str = "v1", schema: dict = VERDICTS):
    return client.ask(messages(text), schema, schema_name="verdicts", prompt_version=version)


def make(settings: JudgeSettings, store: Store | None = None, **changes: Any) -> JudgeClient:
    return JudgeClient(replace(settings, **changes), store, retry_policy=FAST_POLICY)
