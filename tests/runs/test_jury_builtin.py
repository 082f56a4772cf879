"""Issue 22: built-in judge metrics (keyed verdicts on extracted claims, ratings) under samples and a panel.

On a deterministic scripted judge every vote is the plain run's value, so each cell must equal the plain run's
exactly and be stable; the impolite judge (shuffled keyed verdicts, keys as strings, ratings as floats or
strings) must change no vote. The vote sink must keep the judge store's write signature (a drift there once
turned every cache write into a logged TypeError).
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

from judge_server import JudgeServer
from scripted_judge import ScriptedJudge
from textgen_core.evaluate import evaluate
from textgen_core.runs.panel import Jury
from textgen_core.judge.settings import JudgeSettings
from textgen_core.judge.storage import JudgeStore
from textgen_core.model import Dataset, Datum
from textgen_core.runs.jury import VoteSink
from textgen_core.store import Store

PASSAGE = "Paris is the capital of France. The Seine flows through Paris."
ROWS = [Datum("a", "m", "What is the capital of France?", "Paris is the capital of France. Paris is big.", (),
              (PASSAGE,)),
        Datum("b", "m", "Which river?", "The Seine flows through Paris. It is long. Boats sail.", (), (PASSAGE,)),
        Datum("c", "m", "Anything?", "", (), (PASSAGE,))]


@pytest.mark.parametrize("impolite", [False, True])
def test_samples_and_a_panel_on_a_deterministic_judge_equal_the_plain_run(tmp_path: Path, impolite: bool) -> None:
    with JudgeServer(responder=ScriptedJudge(impolite=impolite)) as server:
        settings = JudgeSettings(base_url=server.url, model="j1", api_key="sk-test", timeout=5.0, retries=2,
                                 temperature=0.5)
        store = Store(tmp_path / "builtin.duckdb")
        dataset_id = store.save_dataset(Dataset("d", ROWS))
        plain = evaluate(store, dataset_id, ["faithfulness", "coherence"], judge=settings)
        panel = evaluate(store, dataset_id, ["faithfulness", "coherence"], judge=settings,
                         jury=Jury.of(settings, samples=2, models=["j2"]))
    before = {(r.datum_id, r.score): (r.value, r.reason) for r in store.scores(plain).itertuples()}
    after = store.scores(panel)
    assert before[("a", "faithfulness")][0] == 0.5 and before[("b", "coherence")][0] == 3.0  # the scripted rules
    for r in after.itertuples():
        value, reason = before[(r.datum_id, r.score)]
        details = json.loads(r.details)
        if value != value:  # unscored in the plain run: unscored here, every vote with its reason
            assert r.value != r.value and details["votes"] == 0 and details["unscored_votes"] == 4
            assert reason in r.reason
            continue
        assert r.value == value and details["unstable"] is False and details["votes"] == 4
        assert details["by_judge"] == {"j1": value, "j2": value}
    votes = store.votes_for_run(panel)
    assert len(votes) == 3 * 2 * 4 and set(zip(votes.judge, votes["sample"])) == {
        ("j1", 0), ("j1", 1), ("j2", 0), ("j2", 1)}
    steps = set(store.verdicts(panel, "a").step)
    assert {s.split(" | ")[0] for s in steps} == set(store.verdicts(plain, "a").step)
    assert len(steps) == 4 * len(set(store.verdicts(plain, "a").step))  # each member's, each sample's apart


def test_the_vote_sink_keeps_the_judge_store_write_signature() -> None:
    from textgen_core.store.judge_sql import JudgeTables

    wanted = inspect.signature(JudgeTables.write_judge_batch)  # what the store's judge write queue calls
    assert inspect.signature(VoteSink.write_judge_batch).parameters.keys() == wanted.parameters.keys()
    assert inspect.signature(VoteSink.judge_unscored_cells).parameters.keys() == \
        inspect.signature(JudgeStore.judge_unscored_cells).parameters.keys()
    from textgen_core.judge.batch import BatchLog
    from textgen_core.runs.jury import _PASSED

    interface = {n for proto in (JudgeStore, BatchLog) for n in vars(proto) if not n.startswith("_")}
    assert interface == _PASSED | {"judge_writer", "judge_unscored_cells"}  # every method served, no more
