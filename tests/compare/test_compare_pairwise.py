"""Pairwise preference through the real runner and the loopback judge: order bias, length bias, cache."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Callable

import pytest

from judge_server import CHAT, JudgeServer
from judge_scripting import last_user_text
from pairwise_judges import N, first_position, longer_answer, mentions_paris, rows
from textgen_core.cli.main import main
from textgen_core.compare import compare_models
from textgen_core.compare.pairwise import pairwise_summary
from textgen_core.evaluate import evaluate
from textgen_core.judge.engine import estimate
from textgen_core.judge.metrics.pairwise_preference import IS_BASELINE
from textgen_core.judge.settings import JudgeSettings
from textgen_core.model import Dataset, Datum
from textgen_core.store import Store


def run_with(db: Path, responder: Callable[[dict], Any], **params: Any) -> tuple[Store, int, JudgeServer]:
    server = JudgeServer(responder=responder)
    server.start()
    settings = JudgeSettings(base_url=server.url, model="judge-test", api_key="sk-test", timeout=5.0,
                             concurrency=4, retries=1)
    store = Store(db)
    dataset_id = store.save_dataset(Dataset("capitals", rows()))
    run_id = evaluate(store, dataset_id, ["pairwise_preference"],
                      {"pairwise_preference": params} if params else None, judge=settings)
    server.stop()
    return store, run_id, server


def summary_of(store: Store, run_id: int) -> dict[str, dict[str, Any]]:
    return pairwise_summary(store, run_id).set_index("candidate").to_dict("index")


def test_a_judge_that_always_prefers_the_first_position_decides_no_pair(db_path: Path) -> None:
    store, run_id, server = run_with(db_path, first_position)
    assert server.count(CHAT) == 2 * 2 * N  # two candidates, both orders
    values = store.score_values(run_id, scores=["pairwise_preference"])
    assert set(values["model"]) == {"wordy", "right"} and (values["value"] == 0.5).all()
    summary = summary_of(store, run_id)
    for model in ("wordy", "right"):
        row = summary[model]
        assert row["baseline"] == "base" and row["flip_rate"] == 1.0
        assert (row["wins"], row["ties"], row["losses"], row["order_inconsistent"]) == (0, 0, 0, N)
        share = 1 - 0.025 ** (1 / N)  # N pairs all 0.5: no zero-width interval (the small-sample rule)
        assert row["win_rate"] == 0.5 and (row["ci_low"], row["ci_high"]) == pytest.approx(
            (0.5 - share / 2, 0.5 + share / 2), abs=1e-12)
    cell = store.scores(run_id, datum_id="d0", models=["right"]).iloc[0]
    details = json.loads(cell["details"])
    assert details["outcome"] == "order-inconsistent"
    assert (details["baseline first"], details["candidate first"]) == ("baseline", "candidate")
    verdicts = store.verdicts(run_id, "d0", "right")
    assert verdicts["item"].tolist() == ["baseline first: A = base, B = right", "candidate first: A = right, B = base"]
    assert verdicts["verdict"].tolist() == ["baseline", "candidate"]
    assert set(verdicts["reason"]) == {"the first answer is always better"}
    base = store.scores(run_id, models=["base"])
    assert base["value"].isna().all() and set(base["reason"]) == {IS_BASELINE}


def test_a_judge_that_prefers_the_longer_answer_shows_in_the_length_bias(db_path: Path) -> None:
    store, run_id, _ = run_with(db_path, longer_answer)
    summary = summary_of(store, run_id)
    wordy = summary["wordy"]
    assert (wordy["wins"], wordy["flip_rate"], wordy["win_rate"]) == (N, 0.0, 1.0)  # wrong, but long
    assert wordy["longer_preferred"] == 1.0 and wordy["length_verdicts"] == 2 * N
    right = summary["right"]  # 'Paris.' and 'Lyon.' have one word each: no verdict measures length
    assert right["length_verdicts"] == 0 and math.isnan(right["longer_preferred"]) and right["ties"] == N


def test_a_fair_judge_decides_every_pair_and_the_cache_serves_a_second_run(db_path: Path) -> None:
    store, run_id, server = run_with(db_path, mentions_paris)
    summary = summary_of(store, run_id)
    assert (summary["right"]["wins"], summary["right"]["win_rate"], summary["right"]["flip_rate"]) == (N, 1.0, 0.0)
    assert (summary["wordy"]["ties"], summary["wordy"]["win_rate"]) == (N, 0.5)
    assert math.isnan(summary["wordy"]["longer_preferred"])  # both wrong: the fair judge picked no side
    settings = JudgeSettings(base_url=server.url, model="judge-test", api_key="sk-test")
    dataset_id = store.get_run(run_id)["dataset_id"]
    again = estimate(store.load_dataset(dataset_id).rows, {"pairwise_preference": {}}, settings, store)
    assert (again.calls, again.cached) == (0, 4 * N)  # resumable: every exchange is in the cache
    fresh = estimate(rows(), {"pairwise_preference": {"baseline": "right"}}, settings, None)
    assert fresh.calls == 4 * N and fresh.prompt_tokens > 0  # the dry-run estimate counts both orders


def test_baseline_parameter_and_the_compare_table_leave_pairwise_apart(db_path: Path) -> None:
    store, run_id, _ = run_with(db_path, mentions_paris, baseline="right")
    summary = summary_of(store, run_id)
    assert set(summary) == {"base", "wordy"} and summary["base"]["baseline"] == "right"
    assert summary["base"]["losses"] == N and summary["base"]["win_rate"] == 0.0
    with pytest.raises(Exception, match="no scored values|nothing"):
        compare_models(store, run_id, "right")  # the pairwise score is not a per-model mean to compare


def test_an_empty_answer_loses_without_a_judge_call(db_path: Path) -> None:
    data = [Datum("d0", "base", "Capital of France?", "Paris."), Datum("d0", "blank", "Capital of France?", "  "),
            Datum("d1", "base", "Capital of Spain?", ""), Datum("d1", "blank", "Capital of Spain?", "")]
    server = JudgeServer(responder=mentions_paris)
    with server:
        settings = JudgeSettings(base_url=server.url, model="judge-test", api_key="sk-test")
        store = Store(db_path)
        run_id = evaluate(store, store.save_dataset(Dataset("blank", data)), ["pairwise_preference"], judge=settings)
    assert server.count(CHAT) == 0
    values = store.score_values(run_id, models=["blank"]).set_index("datum_id")["value"].to_dict()
    assert values == {"d0": 0.0, "d1": 0.5}


def test_cli_compare_prints_the_pairwise_table(db_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store, run_id, _ = run_with(db_path, first_position)
    store.close()
    assert main(["--db", str(db_path), "compare", str(run_id), "--baseline", "base"]) == 0
    out = capsys.readouterr().out
    assert "Pairwise preference" in out and "flip rate" in out and "1.00" in out


def test_the_unscored_gate_does_not_count_the_pairwise_baseline(db_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from textgen_core.cli.tables import unscored_gate

    store, run_id, _ = run_with(db_path, first_position)
    assert unscored_gate(store, run_id, 0.0) == 0
    assert "passed" in capsys.readouterr().out


def test_a_resume_asks_only_for_the_pairs_that_failed(db_path: Path) -> None:
    from textgen_core.evaluate import resume

    def broken_on_d3(request: dict[str, Any]) -> Any:
        return "no JSON here" if "(3)" in last_user_text(request) else first_position(request)

    server = JudgeServer(responder=broken_on_d3)
    with server:
        settings = JudgeSettings(base_url=server.url, model="judge-test", api_key="sk-test", retries=0)
        store = Store(db_path)
        run_id = evaluate(store, store.save_dataset(Dataset("capitals", rows())), ["pairwise_preference"],
                          judge=settings)
        failed = store.scores(run_id, datum_id="d3", models=["wordy", "right"])
        assert failed["value"].isna().all() and failed["reason"].notna().all()
        before = server.count(CHAT)
        server.responder = mentions_paris
        resume(store, run_id, judge=settings)
        assert server.count(CHAT) - before == 4  # d3 only: two candidates, both orders; the rest is kept
    values = store.score_values(run_id, models=["right"]).set_index("datum_id")["value"]
    assert values["d3"] == 1.0 and (values.drop("d3") == 0.5).all()


@pytest.mark.parametrize("label", ["a", " A ", "a\n"])
def test_an_impolite_judge_writing_labels_loosely_rules_the_same(db_path: Path, label: str) -> None:
    store, run_id, _ = run_with(db_path, lambda request: {"preferred": label, "reason": "first"})
    summary = summary_of(store, run_id)
    assert summary["right"]["flip_rate"] == 1.0 and summary["right"]["order_inconsistent"] == N


def test_a_judge_naming_no_answer_leaves_the_cell_unscored(db_path: Path) -> None:
    store, run_id, _ = run_with(db_path, lambda request: {"preferred": "C", "reason": "neither"})
    cells = store.scores(run_id, models=["right"])
    assert cells["value"].isna().all() and cells["reason"].str.contains("preferred").all()
    assert summary_of(store, run_id)["right"]["unscored"] == N
