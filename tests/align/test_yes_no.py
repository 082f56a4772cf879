"""A yes/no criterion aligned end to end: Cohen's kappa with Matthews' correlation (scikit-learn as reference),
the worked examples carry "yes"/"no", and the accepted version fixes the planted blind spot."""

from __future__ import annotations

import pytest
from refund_judge import rows
from sklearn.metrics import cohen_kappa_score, matthews_corrcoef

from judge_scripting import request_schema
from judge_server import JudgeServer
from scripted_judge import blocks, sentences
from textgen_core.align import align
from textgen_core.evaluate import evaluate
from textgen_core.judge import JudgeSettings
from textgen_core.judge.metrics.criteria import criterion, define
from textgen_core.model import Dataset
from textgen_core.store import Store

SOLVED = {"name": "solved", "criteria": "Does the reply solve the problem?", "inputs": ["prediction"],
          "output": {"type": "yes_no"}}


def _verdict(system: str, answer: str) -> str:
    if "refund" in answer.lower() and "refund" not in system.lower():
        return "yes"
    return "yes" if len(sentences(answer)) >= 3 and "refund" not in answer.lower() else "no"


def responder(request: dict):
    system, user = request["messages"][0]["content"], request["messages"][-1]["content"]
    if "criteria" in ((request_schema(request) or {}).get("properties") or {}):
        return {"criteria": "Does the reply solve the problem? A refund alone does not.", "steps": ["Read it."]}
    return {"reason": "scripted", "verdict": _verdict(system, blocks(user).get("Answer", ""))}


def test_a_yes_no_blind_spot_is_aligned_with_kappa_and_mcc(tmp_path):
    with JudgeServer(responder=responder) as server:
        store = Store(tmp_path / "yn.duckdb")
        settings = JudgeSettings(base_url=server.url, model="yn", api_key="sk-test-yn", timeout=5.0)
        define(criterion(SOLVED))
        made = rows(120, seed=11)
        dataset = store.save_dataset(Dataset("support", made), "support")
        run = evaluate(store, dataset, ["solved"], judge=settings, workers=1)
        truth = {r.datum_id: 1.0 if _verdict("refund", r.prediction) == "yes" else 0.0 for r in made}
        store.write_labels(run, [(r.datum_id, r.model, "solved", "ana", truth[r.datum_id],
                                  "a refund is not a fix" if "refund" in r.prediction else None, "random", None)
                                 for r in made])
        result = align(store, run, "solved", settings, seed=0)
    s = result.setup
    assert not s.weighted and s.categories == [0.0, 1.0]
    held = [k for k in s.held_out if k in s.current]
    people, judge = [s.cells[k].people for k in held], [s.current[k] for k in held]
    assert result.current.statistic == "kappa"
    assert result.current.value == pytest.approx(cohen_kappa_score(people, judge), abs=1e-9)
    assert result.current.mcc == pytest.approx(matthews_corrcoef(people, judge), abs=1e-9)
    shots = next(j for j in result.judged if j.candidate.kind == "few-shot").candidate.criterion
    assert {e.verdict for e in shots.examples} == {"no"} and all(e.note for e in shots.examples)
    assert result.chosen is not None and result.chosen.agreement.value == pytest.approx(1.0)
    assert result.saved_version == 2
