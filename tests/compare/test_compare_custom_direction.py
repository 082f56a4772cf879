"""A custom judge metric keeps its declared direction wherever a run is read, also in a program that never
defined it (a fresh `compare`, summary or agreement reads the definition the run stored)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from judge_criteria_scripting import CriteriaJudge
from judge_server import JudgeServer
from textgen_core.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
RUBRIC = '''
name = "wordiness"
title = "Wordiness"
criteria = "How many sentences does the reply spend? More is worse."
inputs = ["prediction"]
direction = "lower"
[output]
type = "rating"
min = 1
max = 5
levels = ["one", "two", "three", "four", "five or more"]
'''
READ = '''
import json, sys
from textgen_core.compare import compare_models
from textgen_core.store import Store
from textgen_core.summary import score_order
store = Store(sys.argv[1], read_only=True)
frame = compare_models(store, 1, "terse", scores=["wordiness"], resamples=200)
row = frame.iloc[0]
print(json.dumps({"direction": row["direction"], "verdict": row["verdict"], "wins": int(row["wins"]),
                  "losses": int(row["losses"]), "order": score_order(store, 1)}))
'''


@pytest.mark.timeout(180)
def test_a_fresh_program_compares_a_lower_is_better_custom_metric_the_right_way(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    rubric, data, db = tmp_path / "wordiness.toml", tmp_path / "replies.csv", tmp_path / "runs.duckdb"
    rubric.write_text(RUBRIC)
    ids = [str(i) for i in range(8)]
    terse = pd.DataFrame({"id": ids, "model": "terse", "query": "Where is my order?",
                          "prediction": "It ships today."})
    chatty = terse.assign(model="chatty", prediction="Thanks for waiting. It ships today. Tracking follows. Bye.")
    pd.concat([terse, chatty]).to_csv(data, index=False)
    monkeypatch.setenv("TEXTGEN_EVAL_JUDGE_API_KEY", "sk-direction")
    with JudgeServer(responder=CriteriaJudge()) as server:
        code = main(["run", str(data), "--metrics", "wordiness", "--judge-metric", str(rubric), "--db", str(db),
                     "--judge-base-url", server.url, "--judge-model", "judge", "--retries", "1", "--timeout", "5"])
    assert code == 0, capsys.readouterr()
    capsys.readouterr()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", READ, str(db)], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["direction"] == "lower"
    # four sentences against one on every datum: the chatty model is worse, each datum a loss for it
    assert got["verdict"].startswith("worse"), got
    assert got["losses"] == 8 and got["wins"] == 0
    assert got["order"] == ["wordiness"]
