"""The judge client's parts without a server: schema checks, JSON extraction, retry rules, settings, flags, SQL."""

from __future__ import annotations

import argparse
import random

import pytest

from textgen_core.cli.judge_args import add_judge_arguments, judge_settings_from_args
from textgen_core.errors import ParameterError
from textgen_core.judge import JudgeSettings
from textgen_core.judge.cache import CacheEntry, chat_key
from textgen_core.llm.retry import RetryPolicy, retry_after_seconds
from textgen_core.llm.structured import (
    ReplyError, check_schema, extract_json, is_strict_compatible, parse_reply, validate,
)
from textgen_core.judge.storage import CellWrite
from textgen_core.store import Store

ITEMS = {"type": "array", "minItems": 2, "maxItems": 3, "items": {"type": "integer", "minimum": 1, "maximum": 5}}
OBJ = {"type": "object", "properties": {"label": {"enum": ["yes", "no"]}, "score": {"type": "number"},
                                        "why": {"type": "string", "minLength": 2}},
       "required": ["label", "score"], "additionalProperties": False}


# -- schema validation ---------------------------------------------------------------------------
@pytest.mark.parametrize("value, schema, problem", [
    ([1, 2], ITEMS, None),
    ([1, 2, 3], ITEMS, None),
    ([1], ITEMS, "$: expected at least 2 items, got 1"),
    ([1, 2, 3, 4], ITEMS, "$: expected at most 3 items, got 4"),
    ([1, 9], ITEMS, "$[1]: expected at most 5, got 9"),
    ([1, 0], ITEMS, "$[1]: expected at least 1, got 0"),
    ([1, 2.0], ITEMS, None),
    ([1, 2.5], ITEMS, "$[1]: expected integer, got number"),
    ([1, True], ITEMS, "$[1]: expected integer, got boolean"),
    ({"label": "yes", "score": 0.5}, OBJ, None),
    ({"label": "maybe", "score": 0.5}, OBJ, '$.label: "maybe" is not one of "yes", "no"'),
    ({"label": "yes"}, OBJ, "$: missing required field(s) score"),
    ({"label": "yes", "score": 1, "extra": 1}, OBJ, "$: unexpected field 'extra'"),
    ({"label": "yes", "score": "high"}, OBJ, "$.score: expected number, got string"),
    ({"label": "yes", "score": 1, "why": "a"}, OBJ, "$.why: expected at least 2 characters, got 1"),
    ([], OBJ, "$: expected object, got array"),
    ({"n": None}, {"type": "object", "properties": {"n": {"type": ["integer", "null"]}}}, None),
    (3, {"anyOf": [{"type": "string"}, {"type": "integer"}]}, None),
    (3.5, {"anyOf": [{"type": "string"}, {"type": "integer"}]}, "$: matches none of the allowed forms ($: expected string, got number)"),
    ({"k": 1}, {"type": "object", "additionalProperties": {"type": "string"}}, "$.k: expected string, got integer"),
    ([2, 2], {"type": "array", "minItems": 3, "maxItems": 3}, "$: expected exactly 3 items, got 2"),
    (1, {"enum": [True]}, "$: 1 is not one of true"),
])
def test_validate(value, schema, problem) -> None:
    if problem is None:
        validate(value, schema)
    else:
        with pytest.raises(ReplyError) as caught:
            validate(value, schema)
        assert str(caught.value) == problem


@pytest.mark.parametrize("schema, message", [
    ({"type": "object", "patternProperties": {}}, "unsupported keyword(s): patternProperties"),
    ({"type": "array", "items": {"$ref": "#/x"}}, "schema at $[] uses unsupported keyword(s): $ref"),
    ({"type": "decimal"}, "unknown type 'decimal'"),
    ("object", "must be an object"),
])
def test_schemas_outside_the_subset_are_rejected(schema, message) -> None:
    with pytest.raises(ValueError, match=message.replace("$", r"\$").replace("[", r"\[").replace("(", r"\(")
                       .replace(")", r"\)")):
        check_schema(schema)


def test_annotations_are_accepted() -> None:
    check_schema({"type": "object", "title": "T", "description": "d", "properties": {"a": {"type": "string", "description": "x"}}})


def test_strict_compatibility() -> None:
    assert is_strict_compatible(OBJ) is False  # "why" is not required
    closed = {**OBJ, "required": ["label", "score", "why"]}
    assert is_strict_compatible(closed)
    assert is_strict_compatible({"type": "array", "items": closed})
    assert not is_strict_compatible({"type": "array", "items": {**closed, "additionalProperties": True}})


@pytest.mark.parametrize("text, value", [
    ('{"a": 1}', {"a": 1}),
    ('  [1, 2]  ', [1, 2]),
    ('```json\n{"a": 1}\n```', {"a": 1}),
    ('```\n{"a": 1}\n```', {"a": 1}),
    ('Sure! ```json\n{"a": 1}``` done', {"a": 1}),
    ('The verdict: {"a": {"b": [1, 2]}} -- final.', {"a": {"b": [1, 2]}}),
    ('<think>maybe {"a": 0}?</think>\n{"a": 2}', {"a": 2}),
    ('broken { here, then {"a": 3}', {"a": 3}),
])
def test_extract_json(text, value) -> None:
    assert extract_json(text) == value


@pytest.mark.parametrize("text, message", [
    ("", "empty reply"), (None, "empty reply"), ("   ", "empty reply"),
    ("no json at all", "no JSON object or array in the reply ('no json at all')"),
    ('{"a": 1', "no JSON object or array"),
])
def test_extract_json_failures(text, message) -> None:
    with pytest.raises(ReplyError, match=message.replace("(", r"\(").replace(")", r"\)")):
        extract_json(text)


def test_parse_reply_extracts_then_validates() -> None:
    assert parse_reply('ok: [1, 2]', ITEMS) == [1, 2]
    with pytest.raises(ReplyError, match="expected at least 2 items"):
        parse_reply("[1]", ITEMS)


# -- retry rules ---------------------------------------------------------------------------------
@pytest.mark.parametrize("headers, seconds", [
    ({"retry-after": "2"}, 2.0),
    ({"retry-after": "0.5"}, 0.5),
    ({"retry-after-ms": "250"}, 0.25),
    ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
    ({"retry-after": "soon"}, None),
    ({"retry-after": "-3"}, None),
    ({}, None),
    (None, None),
])
def test_retry_after_seconds(headers, seconds) -> None:
    assert retry_after_seconds(headers) == seconds


def test_retry_after_http_date() -> None:
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}, now=1445412480.0) == pytest.approx(10.0)


def test_backoff_is_jittered_exponential_and_capped() -> None:
    policy = RetryPolicy(base=1.0, cap=8.0, max_retry_after=30.0)
    rng = random.Random(1)
    for attempt, ceiling in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (9, 8.0)]:
        delays = [policy.backoff(attempt, rng) for _ in range(200)]
        assert ceiling / 2 <= min(delays) and max(delays) <= ceiling and len(set(delays)) > 100
    assert 30.0 <= policy.delay(1, rng, retry_after=500.0) <= 33.0
    assert 2.0 <= policy.delay(1, rng, retry_after=2.0) <= 2.2


# -- settings --------------------------------------------------------------------------------------
def test_public_settings_and_repr_hide_the_key() -> None:
    settings = JudgeSettings("http://x/v1", "m", api_key="sk-hidden-1234", seed=3)
    assert "api_key" not in settings.public() and settings.public()["seed"] == 3
    assert "sk-hidden" not in repr(settings) and "sk-hidden" not in str(settings)
    assert set(settings.public()) == {"base_url", "model", "temperature", "seed", "max_tokens", "timeout",
                                      "concurrency", "retries", "backoff", "price_prompt_per_million",
                                      "price_completion_per_million", "embedding_model", "rpm", "tpm",
                                      "api_version", "batch", "batch_discount", "batch_poll", "batch_settle", "batch_wait",
                                      "max_cost",
                                      "max_calls", "response_mode"}


@pytest.mark.parametrize("change, name", [
    ({"temperature": -1}, "temperature"), ({"concurrency": 0}, "concurrency"), ({"retries": -1}, "retries"),
    ({"max_tokens": 0}, "max_tokens"), ({"timeout": 0}, "timeout"), ({"seed": 1.5}, "seed"),
    ({"price_prompt_per_million": -2.0}, "price_prompt_per_million"), ({"model": " "}, "model"),
    ({"backoff": 0}, "backoff"), ({"backoff": float("nan")}, "backoff"), ({"batch_settle": -1.0}, "batch_settle"),
    ({"batch_settle": 601.0}, "batch_settle"),
])
def test_invalid_settings_name_the_setting(change, name) -> None:
    with pytest.raises(ParameterError, match=name):
        JudgeSettings(**{"base_url": "http://x/v1", "model": "m", **change})


def test_price() -> None:
    assert JudgeSettings("u", "m").price(10, 10) is None
    assert JudgeSettings("u", "m", price_prompt_per_million=2.0).price(1_000_000, 5) == 2.0
    assert JudgeSettings("u", "m", price_prompt_per_million=1.0, price_completion_per_million=4.0).price(
        500_000, 250_000) == pytest.approx(1.5)


def test_from_env(clean_env) -> None:
    assert JudgeSettings.from_env() is None
    clean_env.setenv("TEXTGEN_EVAL_JUDGE_BASE_URL", "http://localhost:8000/v1")
    assert JudgeSettings.from_env() is None  # an endpoint alone names no judge
    clean_env.setenv("TEXTGEN_EVAL_JUDGE_MODEL", "qwen")
    clean_env.setenv("OPENAI_API_KEY", "sk-openai")
    settings = JudgeSettings.from_env(concurrency=4, seed=None)
    assert (settings.base_url, settings.model, settings.api_key, settings.concurrency, settings.seed) == (
        "http://localhost:8000/v1", "qwen", "sk-openai", 4, None)
    clean_env.setenv("TEXTGEN_EVAL_JUDGE_API_KEY", "sk-ours")
    assert JudgeSettings.from_env().api_key == "sk-ours"
    assert JudgeSettings.from_env(model="gpt-4o-mini").model == "gpt-4o-mini"
    with pytest.raises(ParameterError, match="unknown judge setting"):
        JudgeSettings.from_env(modle="x")


def test_from_env_defaults_to_openai(clean_env) -> None:
    clean_env.setenv("TEXTGEN_EVAL_JUDGE_MODEL", "gpt-4o-mini")
    assert JudgeSettings.from_env().base_url == "https://api.openai.com/v1"


# -- CLI flags -------------------------------------------------------------------------------------
def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_judge_arguments(parser)
    return parser.parse_args(list(argv))


def test_cli_flags_build_settings(clean_env) -> None:
    clean_env.setenv("MY_JUDGE_KEY", "sk-from-var")
    settings = judge_settings_from_args(parse(
        "--judge-base-url", "http://127.0.0.1:8000/v1", "--judge-model", "llama", "--judge-api-key-env", "MY_JUDGE_KEY",
        "--concurrency", "4", "--temperature", "0.2", "--seed", "11", "--max-tokens", "256", "--timeout", "30",
        "--retries", "2", "--price-prompt", "0.15", "--price-completion", "0.6"))
    assert settings == JudgeSettings("http://127.0.0.1:8000/v1", "llama", api_key="sk-from-var", temperature=0.2,
                                     seed=11, max_tokens=256, timeout=30.0, concurrency=4, retries=2,
                                     price_prompt_per_million=0.15, price_completion_per_million=0.6)


def test_cli_without_model_has_no_judge(clean_env) -> None:
    assert judge_settings_from_args(parse()) is None
    assert judge_settings_from_args(argparse.Namespace()) is None  # a subcommand without the flags


def test_cli_falls_back_to_env(clean_env) -> None:
    clean_env.setenv("TEXTGEN_EVAL_JUDGE_MODEL", "env-model")
    clean_env.setenv("TEXTGEN_EVAL_JUDGE_API_KEY", "sk-env")
    settings = judge_settings_from_args(parse("--concurrency", "2"))
    assert (settings.model, settings.api_key, settings.concurrency) == ("env-model", "sk-env", 2)


def test_cli_refuses_a_key_in_place_of_a_variable_name(clean_env) -> None:
    with pytest.raises(ParameterError, match="NAME of an environment variable") as caught:
        judge_settings_from_args(parse("--judge-model", "m", "--judge-api-key-env", "sk-live-abcdef"))
    assert "abcdef" not in str(caught.value)
    with pytest.raises(ParameterError, match="NOT_SET_ANYWHERE is not set"):
        judge_settings_from_args(parse("--judge-model", "m", "--judge-api-key-env", "NOT_SET_ANYWHERE"))


def test_cli_rejects_bad_values(clean_env) -> None:
    with pytest.raises(ParameterError, match="concurrency"):
        judge_settings_from_args(parse("--judge-model", "m", "--concurrency", "0"))


# -- judge SQL ---------------------------------------------------------------------------------------
def test_cache_rows_round_trip(db_path) -> None:
    store = Store(db_path)
    key = chat_key(endpoint="http://x/v1", model="m", messages=[{"role": "user", "content": "q"}],
                   schema={"type": "object"}, temperature=0.0, seed=None, prompt_version="v1")
    entry = CacheEntry(key, "http://x/v1", "m", "v1", {"messages": [{"role": "user", "content": "q"}]},
                       '{"a": 1}', {"a": 1}, 12, 3)
    store.write_judge_batch([entry], [])
    store.write_judge_batch([entry], [])  # the same key again replaces its entry
    assert CacheEntry(**store.judge_cache_get(key)) == entry
    assert store.judge_cache_get("missing") is None
    assert store.judge_cache_has([key, "missing", key]) == {key} and store.judge_cache_has([]) == set()
    assert store.judge_cache_rows("http://x/v1", ["m"]) == {key: store.judge_cache_get(key)}
    assert store.judge_cache_holds("http://x/v1", ["m"]) and not store.judge_cache_holds("http://x/v1", ["other"])
    store.close()


def _exchange(call_index: int, status: str, **given: object) -> dict:
    return {"datum_id": "d1", "model": "a", "metric": "faithfulness", "step": "verdicts", "call_index": call_index,
            "status": status, "reason": None, "cache_key": None, "messages": None, "reply": None,
            "prompt_tokens": 0, "completion_tokens": 0, "attempts": None, "latency_s": None, **given}


def test_verdicts_and_exchanges_land_through_the_judge_writer(db_path) -> None:
    """Verdicts and exchanges have one write path: a finished cell queued on the store's judge writer."""
    store = Store(db_path)
    run = store.create_run(1, ["faithfulness"], {}, {}, ["a"])  # cells are written only for a run that exists
    writer = store.judge_writer
    cell = ("d1", "a", "faithfulness", "faithfulness", 0.5, {"supported": 1}, None)
    writer.put_cell(CellWrite(run, cell, [
        ("d1", "a", "faithfulness", "verdicts", 0, "Paris is big.", "implied", "stated", "k1"),
        {"datum_id": "d1", "model": "a", "metric": "faithfulness", "step": "verdicts", "item_index": 1,
         "item": "It rains.", "verdict": {"label": "not_implied"}, "reason": None, "cache_key": "k1"},
    ], [_exchange(0, "ok", cache_key="k1", messages=[{"role": "user", "content": "q"}], reply="{}", prompt_tokens=5,
                  completion_tokens=2, attempts=1, latency_s=0.2),
        _exchange(1, "unscored", reason="invalid JSON after 5 attempts: empty reply", attempts=5)], False))
    writer.flush()
    frame = store.verdicts(run, "d1")
    assert frame["verdict"].tolist() == ["implied", '{"label": "not_implied"}']
    rows = store.exchanges(run, "d1")
    assert rows["status"].tolist() == ["ok", "unscored"] and rows["attempts"].tolist() == [1, 5]
    assert rows["messages"][0] == '[{"content": "q", "role": "user"}]'
    # the cell scored again: its old verdicts and exchanges go, the new ones replace them, the cell is stored once
    writer.put_cell(CellWrite(run, cell[:4] + (0.0, {"supported": 0}, None), [
        ("d1", "a", "faithfulness", "verdicts", 0, "Paris is big.", "not_implied", "redo", "k2")], [], True))
    writer.flush()
    assert store.verdicts(run, "d1")["verdict"].tolist() == ["not_implied"] and store.exchanges(run).empty
    assert store.scores(run)["value"].tolist() == [0.0]
    for bad, message in ((("d1", "a"), "needs 9 values"), ({"datum": "d1"}, "unknown field")):
        writer.put_cell(CellWrite(run, cell, [bad], [], True))
        with pytest.raises(ValueError, match=message):
            writer.flush()
    writer.put_cell(CellWrite(run, cell, [], [_exchange(0, "meh")], True))
    with pytest.raises(ValueError, match="exchange status 'meh'"):
        writer.flush()
    assert store.verdicts(run, "d1")["verdict"].tolist() == ["not_implied"]  # a refused batch wrote nothing
    store.delete_run(run, force=True)
    assert store.verdicts(run, "d1").empty and store.exchanges(run).empty
    store.close()
