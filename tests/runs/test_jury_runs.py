"""Issue 22: repeated judging (--samples) and judge panels (--jury-model), end to end against the loopback judge.

The judge (jury_scripting.Voter) rates 1, 2, 3 on a cell's three samples (4 each time on a "steady" answer),
model m2 always 5 and it labels "resolved" answers "escalated": every vote, mean, spread and majority below is
computed by hand from those rules. The impolite judge (missing key, echoed key, verdict as a string or float,
labels in capitals) must give exactly the same votes.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Iterator

import pandas as pd
import pytest

from docs_files import docs_text
from jury_scripting import Voter
from judge_server import JudgeServer
from textgen_core.api import score
from textgen_core.cli.main import main
from textgen_core.errors import ParameterError
from textgen_core.judge.metrics.criteria import read_toml
from textgen_core.runs.panel import Jury
from textgen_core.judge.settings import JudgeSettings
from textgen_core.runs.jury import aggregate
from textgen_core.store import Store

RUBRIC = '''
[[metric]]
name = "jury_tone"
title = "Tone"
criteria = "Rate how warm the reply is."
inputs = ["prediction"]
[metric.output]
type = "rating"
min = 1
max = 5
levels = ["cold", "curt", "neutral", "friendly", "warm"]

[[metric]]
name = "jury_outcome"
title = "Outcome"
criteria = "Label the reply as resolved, escalated or off-topic."
inputs = ["prediction"]
[metric.output]
type = "labels"
labels = ["resolved", "escalated", "off-topic"]
pass = ["resolved"]
'''
ROWS = [("1", "Thanks. It is resolved."), ("2", "A steady reply."), ("3", "I escalated it."), ("4", "")]
SD = math.sqrt(2 / 3)  # population sd of the votes 1, 2, 3


@pytest.fixture(params=["polite", "impolite"])
def judge(request: pytest.FixtureRequest) -> Iterator[tuple[JudgeServer, Voter]]:
    voter = Voter(impolite=request.param == "impolite")
    with JudgeServer(responder=voter) as server:
        yield server, voter


def _files(tmp_path: Path) -> tuple[Path, Path, Path]:
    rubric, data = tmp_path / "rubric.toml", tmp_path / "tickets.csv"
    rubric.write_text(RUBRIC)
    pd.DataFrame({"id": [r[0] for r in ROWS], "model": "m", "prediction": [r[1] for r in ROWS]}).to_csv(
        data, index=False)
    return rubric, data, tmp_path / "runs.duckdb"


def _flags(server: JudgeServer, db: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setenv("TEXTGEN_EVAL_JUDGE_API_KEY", "sk-jury")
    return ["--judge-base-url", server.url, "--judge-model", "judge", "--retries", "1", "--timeout", "5",
            "--db", str(db)]


def _cells(store: Store, run_id: int) -> dict[tuple[str, str], tuple[float | None, dict, str | None]]:
    import json

    return {(r.datum_id, r.metric): (None if r.value != r.value else r.value, json.loads(r.details or "{}"),
                                     r.reason if isinstance(r.reason, str) else None)
            for r in store.scores(run_id).itertuples()}


def test_samples_give_a_spread_per_cell_and_an_unstable_count_and_rerun_from_the_cache(
        judge: tuple[JudgeServer, Voter], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    server, voter = judge
    rubric, data, db = _files(tmp_path)
    args = ["run", str(data), "--metrics", "jury_tone", "--judge-metric", str(rubric), "--samples", "3",
            "--temperature", "0.7", *_flags(server, db, monkeypatch)]
    assert main([*args, "--dry-run", "--no-probe"]) == 0
    out = capsys.readouterr().out
    assert "judge calls: 9 to make, 0 cached" in out and server.count(None) == 0  # 3 answers x 3 samples
    assert main(args) == 0
    out = capsys.readouterr().out
    store = Store(db)
    cells = _cells(store, 1)
    for datum in ("1", "3"):
        value, details, reason = cells[(datum, "jury_tone")]
        assert value == 2.0 and reason is None
        assert (details["min"], details["max"], details["votes"], details["unscored_votes"]) == (1.0, 3.0, 3, 0)
        assert abs(details["sd"] - SD) < 1e-12 and details["unstable"] is True
    value, details, _ = cells[("2", "jury_tone")]
    assert value == 4.0 and details["sd"] == 0.0 and details["unstable"] is False
    value, details, reason = cells[("4", "jury_tone")]  # an empty answer: every vote unscored, never a 0
    assert value is None and "empty prediction" in reason and details["votes"] == 0
    assert "unstable cells, jury_tone: m 2 of 3 scored" in out, out
    votes = store.votes_for_run(1)
    assert len(votes) == 12 and set(votes["sample"]) == {0, 1, 2} and set(votes["judge"]) == {"judge"}
    assert sorted(votes[votes.datum_id == "1"].value) == [1.0, 2.0, 3.0]
    steps = set(store.verdicts(1, "1")["step"])
    assert steps == {f"custom.jury_tone | judge judge, sample {s}" for s in range(3)}
    assert set(store.verdicts(1, "1")["reason"]) == {"scripted"}  # an echoed reply is never stored
    assert voter.reasks == (9 if voter.impolite else 0)
    calls = server.count(None)
    assert calls == 9 + voter.reasks and store.get_run(1)["judge_calls"] == calls
    # the same run again: every sample from the cache, 0 calls (and the estimate says so first)
    assert main([*args, "--dry-run", "--no-probe"]) == 0
    assert "judge calls: 0 to make, 9 cached" in capsys.readouterr().out
    assert main(args) == 0
    capsys.readouterr()
    assert server.count(None) == calls
    assert main(["summary", "1", "--db", str(db)]) == 0  # the stored run's summary says it again
    assert "unstable cells, jury_tone: m 2 of 3 scored" in capsys.readouterr().out
    assert {k: v[0] for k, v in _cells(store, 2).items()} == {k: v[0] for k, v in cells.items()}
    # resuming with other samples or another panel is refused, naming the change
    for changed, named in ((["--samples", "2"], "samples: 3 -> 2"), (["--samples", "3", "--jury-model", "m2"],
                                                                      "panel:")):
        assert main(["resume", "1", "--judge-metric", str(rubric), *changed, *_flags(server, db, monkeypatch)]) == 2
        err = capsys.readouterr().err
        assert named in err and "Traceback" not in err, err
    assert server.count(None) == calls


def test_a_panel_stores_every_members_votes_and_aggregates_them(judge: tuple[JudgeServer, Voter],
                                                                 tmp_path: Path) -> None:
    server, _ = judge
    tone, outcome = read_toml(_files(tmp_path)[0])
    settings = JudgeSettings(base_url=server.url, model="m1", api_key="sk-test", timeout=5.0, retries=1)
    frame = pd.DataFrame({"id": [r[0] for r in ROWS], "model": "m", "prediction": [r[1] for r in ROWS]})
    store = Store(tmp_path / "panel.duckdb")
    wide = score(frame, [tone, outcome], judge=settings, jury=["m2", "m3"], store=store)
    run_id = wide.attrs["run_id"]
    cells = _cells(store, run_id)
    value, details, _ = cells[("1", "jury_tone")]  # m1 1, m2 5, m3 1
    assert value == 7 / 3 and details["by_judge"] == {"m1": 1.0, "m2": 5.0, "m3": 1.0} and details["unstable"]
    value, details, _ = cells[("2", "jury_tone")]  # steady: m1 4, m2 5, m3 4
    assert abs(value - 13 / 3) < 1e-12
    value, details, _ = cells[("1", "jury_outcome")]  # resolved, escalated, resolved: the majority passes
    assert value == 1.0 and details["label"] == "resolved" and details["majority_share"] == 2 / 3
    assert details["unstable"] is True
    value, details, _ = cells[("3", "jury_outcome")]  # escalated by all three
    assert value == 0.0 and details["majority_share"] == 1.0 and details["unstable"] is False
    votes = store.votes_for_run(run_id, score="jury_outcome")
    assert set(votes.judge) == {"m1", "m2", "m3"} and set(votes["sample"]) == {0}
    assert list(votes[(votes.datum_id == "1")].sort_values("judge").label) == ["resolved", "escalated", "resolved"]
    from textgen_core.summary import jury_summary

    table = jury_summary(store, run_id)
    mine = table[(table.score == "jury_tone")].set_index("judge")
    assert mine.loc["m2", "mean"] == 5.0 and mine.loc["m1", "mean"] == (1 + 4 + 1) / 3
    # two members split on datum 1's label: a tie is unscored, naming the tied labels
    tied = score(frame, [outcome], judge=settings, jury=["m2"], store=store, long=True)
    row = tied[(tied.datum_id == "1")].iloc[0]
    assert row.value != row.value and "the votes tie" in row.reason and "resolved 1" in row.reason


def test_the_spending_cap_counts_every_vote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    with JudgeServer(responder=Voter()) as server:
        rubric, data, db = _files(tmp_path)
        args = ["run", str(data), "--metrics", "jury_tone", "--judge-metric", str(rubric), "--samples", "3",
                "--temperature", "0.7", "--jury-model", "m2", *_flags(server, db, monkeypatch)]
        assert main([*args, "--max-calls", "4"]) == 1
        capsys.readouterr()
        assert server.count(None) == 4 and Store(db).get_run(1)["status"] == "interrupted"
        assert Store(db).votes_for_run(1).value.count() == 4  # one scored vote per call the cap let through
        assert Store(db).scores(1).empty  # no cell has all six votes yet: none is shown as if it had
        assert main(["resume", "1", "--judge-metric", str(rubric), *_flags(server, db, monkeypatch)]) == 0
        assert server.count(None) == 18  # 3 answers x 3 samples x 2 members, none asked twice
        cells = _cells(Store(db), 1)
        assert cells[("1", "jury_tone")][0] == (1 + 2 + 3 + 5 * 3) / 6


def test_bad_panels_are_one_clear_error(tmp_path: Path) -> None:
    lead = JudgeSettings(base_url="http://127.0.0.1:9/v1", model="a")
    with pytest.raises(ParameterError, match="samples=0"):
        Jury.of(lead, samples=0)
    with pytest.raises(ParameterError, match="--batch cannot be combined"):
        Jury.of(JudgeSettings(base_url="http://127.0.0.1:9/v1", model="a", batch=True), samples=2)
    panel = tmp_path / "panel.toml"
    panel.write_text('samples = 2\n[[member]]\nmodel = "b"\ncolour = "red"\n')
    from textgen_core.runs.panel import read_panel

    with pytest.raises(ParameterError, match="member 1: 'colour' is not a member key"):
        read_panel(str(panel), lead)
    panel.write_text('samples = 2\naggregate = "median"\n[[member]]\nmodel = "b"\nbase_url = "http://h/v1"\napi_key_env = ""\n')
    with pytest.raises(ParameterError, match="aggregate='median'"):
        read_panel(str(panel), lead)


def test_aggregate_never_counts_an_unscored_vote() -> None:
    votes = [("a", 0, 4.0, None, None), ("a", 1, float("nan"), "reply without a verdict", None),
             ("b", 0, 2.0, None, None)]
    value, details, reason = aggregate(votes, "mean")
    assert value == 3.0 and details["votes"] == 2 and details["unscored_votes"] == 1 and reason is None
    assert details["by_judge"] == {"a": 4.0, "b": 2.0}
    none = [("a", 0, None, "x", None), ("a", 1, None, "y", None), ("b", 0, float("nan"), "z", None)]
    value, details, reason = aggregate(none, "mean")
    assert value is None and reason == "no scored vote (a sample 0: x; a sample 1: y; b sample 0: z)"
    labels = [("a", 0, 1.0, None, "resolved"), ("b", 0, 0.0, None, "escalated"), ("c", 0, 0.0, None, "off-topic")]
    value, details, reason = aggregate(labels, "majority")  # three labels once each: a tie, no label preferred
    assert value is None and reason == "the votes tie: resolved 1, escalated 1, off-topic 1"


def test_compare_keeps_the_datum_as_the_unit_with_samples(tmp_path: Path) -> None:
    with JudgeServer(responder=Voter()) as server:
        tone, _ = read_toml(_files(tmp_path)[0])
        settings = JudgeSettings(base_url=server.url, model="j", api_key="sk-test", timeout=5.0, retries=1,
                                 temperature=0.7)
        frame = pd.DataFrame({"id": ["1", "2", "3"] * 2, "model": ["a"] * 3 + ["b"] * 3,
                              "prediction": ["Fine. Done."] * 3 + ["A steady reply."] * 3})
        store = Store(tmp_path / "pairs.duckdb")
        run_id = score(frame, [tone], judge=settings, samples=3, store=store).attrs["run_id"]
    from textgen_core.compare.comparison import paired_differences

    pairs = paired_differences(store, run_id, "a", "b", "jury_tone")
    assert len(pairs) == 3  # three datums, not nine samples
    assert len(store.votes_for_run(run_id)) == 18
    diffs = pairs.select_dtypes("number").iloc[:, -1].abs().tolist()
    assert diffs == [2.0, 2.0, 2.0]  # |4 - mean(1, 2, 3)| per datum


def test_ray_refuses_a_panel_and_temperature_zero_warns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    with JudgeServer(responder=Voter()) as server:
        rubric, data, db = _files(tmp_path)
        base = ["run", str(data), "--metrics", "jury_tone", "--judge-metric", str(rubric),
                *_flags(server, db, monkeypatch)]
        assert main([*base, "--samples", "2", "--engine", "ray"]) == 2
        err = capsys.readouterr().err
        assert "local engine only" in err and "Traceback" not in err and not db.exists()
        assert server.count(None) == 0
        assert main([*base, "--samples", "2", "--dry-run", "--no-probe"]) == 0
        captured = capsys.readouterr()
        assert "temperature 0" in captured.err and "judge calls: 6 to make" in captured.out


def test_the_readme_panel_file_reads_as_documented(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import re

    from textgen_core.runs.panel import read_panel

    readme = docs_text()
    section = readme[readme.index("## Repeated judging and judge panels"):]
    example = re.search(r"```toml panel.toml\n(.*?)```", section, re.S).group(1)
    assert 'api_key_env = "OLLAMA_KEY"' in section  # the prose names the key variable's setting
    panel = tmp_path / "panel.toml"
    panel.write_text(example.replace("http://127.0.0.1:8000/v1", "http://localhost:11434/v1")
                     .replace("price_prompt", 'api_key_env = "OLLAMA_KEY"\nprice_prompt'))
    monkeypatch.setenv("OLLAMA_KEY", "local-key")
    lead = JudgeSettings(base_url="https://api.openai.com/v1", model="gpt-4o-mini", api_key="sk-lead")
    jury = read_panel(str(panel), lead, models=["o4-mini"])
    assert jury.names == ["gpt-4o-mini", "llama3.1:8b", "o4-mini"] and jury.samples == 2
    assert jury.aggregate == "mean" and jury.members[1].endpoint == "http://localhost:11434/v1"
    assert jury.members[1].api_key == "local-key" and jury.members[2].api_key == "sk-lead"
    assert "local-key" not in str(jury.public()) and jury.public()["panel"][1]["api_key_env"] == "OLLAMA_KEY"
    assert read_panel(str(panel), lead, samples=4).samples == 4  # the flag wins


def test_a_resume_judges_an_unscored_vote_again_and_drops_its_old_items(tmp_path: Path) -> None:
    voter = Voter()
    voter.off_scale.add(("m2", "escalated"))  # m2's vote on datum 3 is off the scale: unscored
    with JudgeServer(responder=voter) as server:
        tone, _ = read_toml(_files(tmp_path)[0])
        settings = JudgeSettings(base_url=server.url, model="m1", api_key="sk-test", timeout=5.0, retries=1)
        frame = pd.DataFrame({"id": [r[0] for r in ROWS], "model": "m", "prediction": [r[1] for r in ROWS]})
        store = Store(tmp_path / "again.duckdb")
        run_id = score(frame, [tone], judge=settings, jury=["m2"], store=store).attrs["run_id"]
        value, details, _ = _cells(store, run_id)[("3", "jury_tone")]
        assert value == 1.0 and details["votes"] == 1 and details["unscored_votes"] == 1  # m1's 1 alone, not 0
        tag = "| judge m2, sample 0"
        failed = store.exchanges(run_id, "3")
        assert list(failed[failed.step.str.endswith(tag)].status) == ["unscored"]
        voter.off_scale.clear()
        calls = server.count(None)
        from textgen_core.evaluate import resume

        resume(store, run_id, judge=settings)  # the stored panel; only the unscored vote is asked again
        assert server.count(None) == calls + 1
        value, details, _ = _cells(store, run_id)[("3", "jury_tone")]
        assert value == 3.0 and details["by_judge"] == {"m1": 1.0, "m2": 5.0}
        assert store.exchanges(run_id, "3").empty  # the old failed exchange is gone with the vote it explained
        assert list(store.verdicts(run_id, "3").step) == ["custom.jury_tone | judge m1, sample 0",
                                                          "custom.jury_tone | judge m2, sample 0"]
