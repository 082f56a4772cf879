"""Issue 22: custom judge metrics defined as data, end to end on the CLI and the Python API.

The loopback judge rules by the rules of judge_criteria_scripting; the impolite one (first replies missing a
key or echoing the metric's name, then verdict first, ratings as strings or floats, labels in capitals) must
give exactly the polite one's scores.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pandas as pd
import pytest

from judge_criteria_scripting import CriteriaJudge
from judge_server import JudgeServer
from textgen_core.api import score
from textgen_core.cli.main import main
from textgen_core.errors import ParameterError
from textgen_core.judge.metrics.criteria import Criterion, Output, criterion, read_toml
from textgen_core.judge.settings import JudgeSettings
from textgen_core.store import Store

RUBRIC = '''
[[metric]]
name = "my_tone"
title = "Support tone"
criteria = "Does the reply follow our support tone guide: warm, plain, no blame?"
steps = ["Read the reply.", "Check each rule of the guide."]
inputs = ["prediction", "channel"]
[metric.output]
type = "rating"
min = 1
max = 5
levels = ["cold", "curt", "neutral", "friendly", "warm"]

[[metric]]
name = "outcome"
title = "Ticket outcome"
criteria = "Label the reply as resolved, escalated or off-topic."
inputs = ["query", "prediction"]
direction = "higher"
[metric.output]
type = "labels"
labels = ["resolved", "escalated", "off-topic"]
pass = ["resolved"]

[[metric]]
name = "dosage"
title = "Mentions the dosage"
criteria = "Does the summary mention the dosage?"
[metric.output]
type = "yes_no"
'''

ROWS = [  # id, prediction, channel -> (my_tone, outcome, dosage) by the scripted rules
    ("1", "Thanks for asking. The issue is resolved now.", "email"),
    ("2", "I escalated this to a manager.", "chat"),
    ("3", "Take 200 mg twice a day. Drink water. Rest well. Call us.", ""),
    ("4", "", "chat"),
]
EXPECTED = {
    ("1", "my_tone"): 2.0, ("1", "outcome"): 1.0, ("1", "dosage"): 0.0,
    ("2", "my_tone"): 1.0, ("2", "outcome"): 0.0, ("2", "dosage"): 0.0,
    ("3", "my_tone"): None, ("3", "outcome"): 0.0, ("3", "dosage"): 1.0,
    ("4", "my_tone"): None, ("4", "outcome"): None, ("4", "dosage"): None,
}
REASONS = {("3", "my_tone"): "no channel (metadata column)", ("4", "my_tone"): "empty prediction",
           ("4", "outcome"): "empty prediction", ("4", "dosage"): "empty prediction"}


@pytest.fixture(params=["polite", "impolite"])
def judge(request: pytest.FixtureRequest) -> Iterator[tuple[JudgeServer, CriteriaJudge]]:
    responder = CriteriaJudge(impolite=request.param == "impolite")
    with JudgeServer(responder=responder) as server:
        yield server, responder


def frame() -> pd.DataFrame:
    return pd.DataFrame({"id": [r[0] for r in ROWS], "model": ["m"] * len(ROWS), "query": ["Where is my order?"] * 4,
                         "prediction": [r[1] for r in ROWS], "channel": [r[2] for r in ROWS]})


def cells(store: Store, run_id: int) -> dict[tuple[str, str], tuple[float | None, str | None]]:
    got = store.scores(run_id)
    return {(r.datum_id, r.metric): (None if r.value != r.value else r.value,
                                     r.reason if isinstance(r.reason, str) else None) for r in got.itertuples()}


def check(got: dict) -> None:
    for key, value in EXPECTED.items():
        assert got[key][0] == value, (key, got[key])
    for key, reason in REASONS.items():
        assert got[key][1] == reason, (key, got[key])


def cli_judge(server: JudgeServer, db: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setenv("TEXTGEN_EVAL_JUDGE_API_KEY", "sk-custom")
    return ["--judge-base-url", server.url, "--judge-model", "judge", "--retries", "1", "--timeout", "5",
            "--db", str(db)]


def test_rubric_file_end_to_end_on_the_cli(judge: tuple[JudgeServer, CriteriaJudge], tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    server, responder = judge
    rubric, data, db = tmp_path / "rubric.toml", tmp_path / "tickets.csv", tmp_path / "runs.duckdb"
    rubric.write_text(RUBRIC)
    frame().to_csv(data, index=False)
    args = ["run", str(data), "--metrics", "my_tone,outcome,dosage", "--judge-metric", str(rubric),
            *cli_judge(server, db, monkeypatch)]
    assert main([*args, "--dry-run", "--no-probe"]) == 0  # no call at all, not even a timing probe
    estimate = capsys.readouterr().out
    assert "judge calls" in estimate and server.count(None) == 0
    assert main(args) == 0, capsys.readouterr()
    out = capsys.readouterr().out
    assert "my_tone" in out and "outcome" in out
    store = Store(db)
    check(cells(store, 1))
    asked = responder.calls["first"]
    assert asked == 8  # rows 1-3 x 3 metrics, less row 3's tone (no channel); row 4 is empty: never asked
    assert responder.calls["again"] == (asked if responder.impolite else 0)  # each bad first reply re-asked once
    verdicts = store.verdicts(1, "1")
    assert set(verdicts["step"]) == {"custom.my_tone", "custom.outcome", "custom.dosage"}
    assert (verdicts["reason"] != "").all()
    # the same run again: every reply comes from the cache
    assert main(args) == 0
    capsys.readouterr()
    assert responder.calls["first"] == asked
    check(cells(store, 2))
    # an edited definition: resuming a run with it is refused, naming the change
    rubric.write_text(RUBRIC.replace("warm, plain, no blame", "warm and brief"))
    assert main(["resume", "1", "--judge-metric", str(rubric), *cli_judge(server, db, monkeypatch)]) == 2
    err = capsys.readouterr().err
    assert "judge metric my_tone was edited" in err and "warm and brief" in err and "criteria:" in err
    # another program, without the file: the run's stored definitions are used, and nothing is asked again.
    # Once (the polite judge): nothing is asked, so how the judge replies cannot change what this shows.
    if responder.impolite:
        return
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run([sys.executable, "-m", "textgen_core", "resume", "2", *cli_judge(server, db, monkeypatch)],
                          env=env | {"TEXTGEN_EVAL_JUDGE_API_KEY": "sk-custom"}, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stdout + done.stderr
    assert "my_tone" in done.stdout and responder.calls["first"] == asked


def test_python_api_takes_a_dict_or_a_dataclass(judge: tuple[JudgeServer, CriteriaJudge], tmp_path: Path) -> None:
    server, _ = judge
    settings = JudgeSettings(base_url=server.url, model="judge", api_key="sk-test", timeout=5.0, retries=1)
    tone, outcome, dosage = read_toml_text(tmp_path, RUBRIC)
    store = Store(tmp_path / "api.duckdb")
    wide = score(frame(), [tone.as_dict(), outcome, dosage], judge=settings, store=store)
    check(cells(store, wide.attrs["run_id"]))
    dataclass = Criterion(name="short", title="Short", criteria="Is the reply one sentence?",
                          output=Output("yes_no", labels=("yes", "no"), passing=("yes",)))
    got = score(frame(), [dataclass], judge=settings, store=store, long=True)
    assert set(got["metric"]) == {"short"}


def read_toml_text(tmp_path: Path, text: str) -> list[Criterion]:
    path = tmp_path / "defs.toml"
    path.write_text(text)
    return read_toml(path)


@pytest.mark.parametrize("text, key", [
    ('name = "x"\ntitle = "X"\n[output]\ntype = "yes_no"', "'criteria' is missing"),
    ('name = "x"\ncriteria = "c"\n[output]\ntype = "stars"', "'output.type' must be rating, labels or yes_no"),
    ('name = "x"\ncriteria = "c"\n[output]\ntype = "labels"\nlabels = ["a", "b"]\npass = ["c"]',
     "'output.pass' must name some of the labels"),
    ('name = "x"\ncriteria = "c"\n[output]\ntype = "rating"\nmin = 1\nmax = 3\nlevels = ["a", "b"]',
     "'output.levels' must have one sentence per level, 3, got 2"),
    ('name = "x"\ncriteria = "c"\ncolour = "red"\n[output]\ntype = "yes_no"', "'colour' is not a definition key"),
    ('name = "X y"\ncriteria = "c"\n[output]\ntype = "yes_no"', "'name' must be lower-case"),
    ('name = "x"\ncriteria = "c"\ninputs = "prediction"\n[output]\ntype = "yes_no"', "'inputs' must be a list"),
    ('name = "x"\ncriteria = "c"\n[output]\ntype = "rating"\nmin = 1.5', "'output.min' must be a whole number"),
    ('name = "faithfulness"\ncriteria = "c"\n[output]\ntype = "yes_no"', "is a built-in metric"),
    ('name = "x"\ncriteria = "c"\n[output', "not valid TOML"),
])
def test_a_malformed_file_is_one_clear_error_naming_the_key(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            text: str, key: str) -> None:
    rubric = tmp_path / "bad.toml"
    rubric.write_text(text)
    db = tmp_path / "none.duckdb"
    code = main(["run", "sample", "--metrics", "x", "--judge-metric", str(rubric), "--db", str(db)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and key in err and "Traceback" not in err, err
    assert str(rubric) in err or "TOML" in err
    assert not db.exists()  # nothing stored


def test_saved_definitions_get_a_new_version_per_edit_and_are_listed(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "saved.duckdb"
    store = Store(db)
    tone = criterion(read_toml_text(tmp_path, RUBRIC)[0].as_dict() | {"name": "saved_tone"})  # not defined yet
    assert store.save_criterion(tone.name, tone.title, tone.text()) == 1
    assert store.save_criterion(tone.name, tone.title, tone.text()) == 1  # unchanged: same version
    edited = criterion(tone.as_dict() | {"criteria": "Is the reply warm?"})
    assert store.save_criterion(edited.name, edited.title, edited.text()) == 2
    assert store.load_criterion("saved_tone", 1)[1]["criteria"] == tone.criteria
    assert store.load_criterion("saved_tone")[0] == 2  # the latest version
    store.close()
    assert main(["metrics", "--db", str(db)]) == 0
    listing = capsys.readouterr().out
    assert "saved judge metrics" in listing and "saved_tone" in listing and "v2" in listing
    assert main(["metrics", "saved_tone", "--db", str(db)]) == 0
    page = capsys.readouterr().out
    assert "Is the reply warm?" in page and "prompt (system)" in page and "1: cold" in page
    assert "Sample channel." in page
    assert "saved version 2" in page


def test_the_fingerprint_holds_the_definition_text() -> None:
    from textgen_core.judge.metrics.criteria import define
    from textgen_core.judge.metrics import fingerprint, fingerprint_changes

    settings = JudgeSettings(base_url="http://127.0.0.1:9", model="judge", api_key="sk-test")
    raw = {"name": "fp_probe", "criteria": "Is it kind?", "output": {"type": "yes_no"}}
    define(raw)
    before = fingerprint(settings, ["fp_probe"])
    assert json.dumps(before["criteria"]["fp_probe"]).count("Is it kind?") == 1
    define(raw | {"criteria": "Is it kind and brief?"})
    changes = fingerprint_changes(before, fingerprint(settings, ["fp_probe"]))
    assert any(c.startswith("judge metric fp_probe was edited (criteria:") for c in changes), changes
    with pytest.raises(ParameterError, match="key 'output' must be a table"):
        define({"name": "fp_probe", "criteria": "c", "output": "yes"})


def _stored(tmp_path: Path, name: str) -> tuple[Store, int]:
    from textgen_core.datasets.loader import load_dataset

    store = Store(tmp_path / f"{name}.duckdb")
    return store, store.save_dataset(load_dataset(frame(), name=name))


def test_batch_api_and_spending_caps_treat_a_custom_metric_like_a_built_in(tmp_path: Path) -> None:
    from judge_server import CHAT
    from textgen_core.errors import BudgetReached
    from textgen_core.evaluate import evaluate
    from textgen_core.judge.metrics.criteria import define

    for c in read_toml_text(tmp_path, RUBRIC):
        define(c)
    metrics = ["my_tone", "outcome", "dosage"]
    with JudgeServer(responder=CriteriaJudge()) as server:
        server.batches.delay = 0.02
        base = dict(base_url=server.url, model="judge", api_key="sk-b", timeout=5.0, retries=1, batch_poll=0.02,
                    batch_settle=0.1)
        store, dataset_id = _stored(tmp_path, "batched")
        run_id = evaluate(store, dataset_id, metrics, judge=JudgeSettings(**base, batch=True))
        check(cells(store, run_id))
        assert server.count(CHAT) == 0 and len(server.batches.created) == 1  # one round: no extraction step
        capped, capped_id = _stored(tmp_path, "capped")
        try:
            evaluate(capped, capped_id, metrics, judge=JudgeSettings(**base, max_calls=3))
        except BudgetReached:
            pass
        run = capped.list_runs().iloc[0]
        assert run["status"] == "interrupted" and server.count(CHAT) <= 3
        assert int(run["judge_calls"]) <= 3


def test_the_ray_engine_refuses_a_custom_metric_by_name(tmp_path: Path) -> None:
    from textgen_core.engines.ray_engine import check_ray_metrics
    from textgen_core.judge.metrics.criteria import define

    define({"name": "ray_probe", "criteria": "Is it short?", "output": {"type": "yes_no"}})
    settings = JudgeSettings(base_url="http://127.0.0.1:9", model="judge", api_key="sk-test")
    with pytest.raises(ParameterError, match="ray_probe: custom judge metrics run with --engine local"):
        check_ray_metrics(["ray_probe"], settings)
