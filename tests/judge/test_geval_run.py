"""Probability-weighted ratings end to end (issue 32): the real openai client over HTTP to the loopback judge
returning token log-probabilities, a real DuckDB file, the CLI. The weighted value is checked against a hand
computation, kept through the cache (a re-run makes no call), and every endpoint without log-probabilities
falls back to the chosen rating with its reason, counted."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from judge_logprobs import rated
from judge_server import CHAT, Fault, JudgeServer, Reply
from textgen_core.cli.main import main
from textgen_core.evaluate import evaluate
from textgen_core.judge.settings import JudgeSettings
from textgen_core.model import Dataset, Datum
from textgen_core.store import Store

#: What the judge "thinks" of each answer: the rating it writes and its alternatives at the rating's token.
BELIEFS = {
    "a": ({"reason": "clear", "score": 4}, {"4": math.log(0.6), " 3": math.log(0.3), "5": math.log(0.1)}),
    "b": ({"reason": "muddled", "score": 2}, {"2": math.log(0.5), "1": math.log(0.25), "3": math.log(0.25)}),
}
#: Worked by hand: 4 x 0.6 + 3 x 0.3 + 5 x 0.1 = 3.8; 2 x 0.5 + 1 x 0.25 + 3 x 0.25 = 2.0
EXPECTED = {"a": 3.8, "b": 2.0}


def belief(body: dict) -> tuple[dict, dict]:
    text = body["messages"][-1]["content"]
    return BELIEFS["a"] if "Answer A" in text else BELIEFS["b"]


def knowing(body: dict) -> Reply:
    value, top = belief(body)
    return rated(value, top)


def write_data(path: Path) -> Path:
    pd.DataFrame({"id": ["1", "2"], "model": ["m", "m"], "query": ["q1", "q2"],
                  "prediction": ["Answer A is here.", "Answer B rambles."]}).to_csv(path, index=False)
    return path


def cells(db: Path, run_id: int) -> dict[str, tuple[float, dict]]:
    store = Store(db)
    try:
        frame = store.scores(run_id)
        return {r.datum_id: (r.value, json.loads(r.details)) for r in frame.itertuples()}
    finally:
        store.close()


def cli(server: JudgeServer, db: Path, data: Path, *extra: str) -> list[str]:
    return ["--db", str(db), "run", str(data), "--metrics", "coherence", "--judge-base-url", server.url,
            "--judge-model", "judge", "--retries", "1", "--timeout", "5", *extra]


def test_weighted_ratings_on_the_cli_exact_and_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TEXTGEN_EVAL_JUDGE_API_KEY", "sk-geval")
    data, db = write_data(tmp_path / "d.csv"), tmp_path / "g.duckdb"
    with JudgeServer(responder=knowing) as server:
        args = cli(server, db, data, "--param", "coherence.rating=weighted")
        assert main(args) == 0, capsys.readouterr()
        sent = server.recorded()
        assert len(sent) == 2 and all(r.body["logprobs"] is True and r.body["top_logprobs"] == 20 for r in sent)
        first = cells(db, 1)
        for datum, name in (("1", "a"), ("2", "b")):
            value, details = first[datum]
            assert value == pytest.approx(EXPECTED[name], abs=1e-12)
            assert details["score"] == BELIEFS[name][0]["score"] and details["weighted"] == value
        assert first["1"][1]["probabilities"] == pytest.approx({"3": 0.3, "4": 0.6, "5": 0.1}, abs=1e-12)
        store = Store(db)
        assert sorted(store.verdicts(1, "1")["verdict"]) == ["4"]  # the written rating stays the verdict
        store.close()
        # the same run again: no call, the same weighted numbers from the cache
        assert main(args) == 0, capsys.readouterr()
        assert server.count(CHAT) == 2 and cells(db, 2) == first
        # the default (chosen) asks without log-probabilities: its own requests, and the written ratings
        assert main(cli(server, db, data)) == 0
        assert server.count(CHAT) == 4 and all("logprobs" not in r.body for r in server.recorded()[2:])
        assert {d: v for d, (v, _) in cells(db, 3).items()} == {"1": 4.0, "2": 2.0}
    assert "keep the chosen rating" not in capsys.readouterr().out


def test_an_endpoint_without_logprobs_keeps_the_chosen_rating_and_says_so(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TEXTGEN_EVAL_JUDGE_API_KEY", "sk-geval")
    data, db = write_data(tmp_path / "d.csv"), tmp_path / "g.duckdb"
    with JudgeServer(responder=lambda body: belief(body)[0]) as server:  # replies without logprobs
        assert main(cli(server, db, data, "--param", "coherence.rating=weighted")) == 0
    got = cells(db, 1)
    assert {d: v for d, (v, _) in got.items()} == {"1": 4.0, "2": 2.0}
    assert got["1"][1]["weighted_unavailable"] == "the endpoint returned no log-probabilities with its reply"
    out = capsys.readouterr().out
    assert "coherence: 2 of 2 scored cells keep the chosen rating, not the weighted one:" in out
    assert "2 x the endpoint returned no log-probabilities with its reply" in out


def test_a_400_refusing_logprobs_is_asked_again_without_and_never_again(tmp_path: Path) -> None:
    def refusing(body: dict) -> Any:
        if body.get("logprobs"):
            return Fault.http(400, "logprobs is not supported for this model", "unsupported_parameter")
        return belief(body)[0]

    rows = [Datum(str(i), "m", "q", f"Answer {'A' if i % 2 else 'B'} {i}", (), (), {}) for i in range(6)]
    store = Store(tmp_path / "g.duckdb")
    dataset_id = store.save_dataset(Dataset("d", rows))
    with JudgeServer(responder=refusing) as server:
        settings = JudgeSettings(base_url=server.url, model="judge", api_key="sk-g", timeout=5.0, retries=1,
                                 concurrency=1)
        run_id = evaluate(store, dataset_id, ["coherence"], {"coherence": {"rating": "weighted"}}, judge=settings)
        asked_with = [r for r in server.recorded() if r.body.get("logprobs")]
        assert len(asked_with) == 1 and asked_with[0].status == 400  # learned once: not fatal, not repeated
        assert server.count(CHAT) == 7
        # the refusal is cached with each reply: the run again makes no call and gives the same cells
        again = evaluate(store, dataset_id, ["coherence"], {"coherence": {"rating": "weighted"}}, judge=settings)
        assert server.count(CHAT) == 7
        assert store.scores(again)[["datum_id", "value", "details"]].equals(
            store.scores(run_id)[["datum_id", "value", "details"]])
    frame = store.scores(run_id)
    assert frame["value"].notna().all()  # nothing unscored, nothing lost
    reasons = {json.loads(d)["weighted_unavailable"] for d in frame["details"]}
    assert reasons == {"the endpoint refused log-probabilities (HTTP 400: logprobs is not supported for this model)"}
    assert store.get_run(run_id)["status"] == "finished"
    store.close()


RUBRIC = """
[[metric]]
name = "helpful10"
title = "Helpfulness"
criteria = "How helpful is the answer?"
[metric.output]
type = "rating"
min = 1
max = 10
"""


def test_a_custom_ten_point_rating_split_into_digit_tokens_falls_back(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TEXTGEN_EVAL_JUDGE_API_KEY", "sk-geval")
    rubric, data, db = tmp_path / "rubric.toml", write_data(tmp_path / "d.csv"), tmp_path / "g.duckdb"
    rubric.write_text(RUBRIC)

    def ten(body: dict) -> Reply:  # a digit-by-digit tokenizer: 10 is written "1", "0"
        first = "Answer A" in body["messages"][-1]["content"]
        value = {"reason": "r", "score": 10 if first else 7}
        return rated(value, {"1": -0.1, "9": -2.0} if first else {"7": -0.2, "8": -1.7}, split_digits=True)

    with JudgeServer(responder=ten) as server:
        args = ["--db", str(db), "run", str(data), "--metrics", "helpful10", "--judge-metric", str(rubric),
                "--judge-base-url", server.url, "--judge-model", "judge", "--param", "helpful10.rating=weighted"]
        assert main([*args[:-2], "--dry-run", "--no-probe", *args[-2:]]) == 0
        assert server.count(None) == 0
        assert main(args) == 0, capsys.readouterr()
    got = cells(db, 1)
    assert got["1"][0] == 10.0 and got["2"][0] == 7.0
    assert got["1"][1]["weighted_unavailable"].startswith("the rating 10 is written across 2 tokens ('1', '0')")
    assert got["2"][1]["weighted_unavailable"].startswith("on a 1-10 scale a single digit may begin")
    assert "helpful10: 2 of 2 scored cells keep the chosen rating" in capsys.readouterr().out


def test_batch_mode_gives_the_direct_weighted_numbers(tmp_path: Path) -> None:
    rows = [Datum("1", "m", "q", "Answer A.", (), (), {}), Datum("2", "m", "q", "Answer B.", (), (), {})]
    with JudgeServer(responder=knowing) as server:
        server.batches.delay = 0.02
        store = Store(tmp_path / "b.duckdb")
        dataset_id = store.save_dataset(Dataset("d", rows))
        settings = JudgeSettings(base_url=server.url, model="judge", api_key="sk-b", timeout=5.0, retries=1,
                                 batch=True, batch_poll=0.02, batch_settle=0.1)
        run_id = evaluate(store, dataset_id, ["coherence"], {"coherence": {"rating": "weighted"}}, judge=settings)
        assert server.count(CHAT) == 0 and len(server.batches.created) == 1
    values = dict(zip(store.scores(run_id)["datum_id"], store.scores(run_id)["value"]))
    assert values == pytest.approx({"1": EXPECTED["a"], "2": EXPECTED["b"]}, abs=1e-12)
    store.close()
