"""Failure-mode names from the judge (issue 31, `failures RUN --name-with-judge`): one call per mode, estimated,
under the run's spending cap, added to the run's usage, cached, stored beside the word name; and every way a
judge's name can be unusable keeps the word name with the reason.

A judged run (tests/planted_failures.py) gets its modes through the store's one write path, as `failures`
stores them, so these tests need no sentence model; the real openai client talks to the loopback judge.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd
import pytest

from judge_server import CHAT, Fault, JudgeServer
from planted_failures import write_run
from textgen_core.cli.main import main
from textgen_core.failures import FailureRule, stored_modes
from textgen_core.failures.grouping import SAMPLE
from textgen_core.failures.judge_names import MAX_NAME, clean, request
from textgen_core.failures.modes import METHOD, asked
from textgen_core.metrics.models.local_models import PACKAGED
from textgen_core.report import build_report
from textgen_core.store import Store

#: The planted type of each mode and the words a grouping would have found for it.
MODES = {0: ("refund", ["refund", "policy", "fabricated"]), 1: ("date", ["date", "wrong", "year"]),
         2: ("refuses", ["refuses", "help", "declines"])}


def make_run(db: Path) -> int:
    """A qa_grade run of 24 datums x 2 models whose failing verdicts are stored as three modes (and 2 unsorted)."""
    store = Store(db)
    kinds = ["refund", "date", "refuses", "calculation"]
    truth = {(f"d{i:05d}", m): kinds[i % 4] for i in range(24) for m in ("base", "cand") if i % 3 != 2}
    planted = write_run(store, 24, truth, np.random.default_rng(3))
    items = store.failures.judged_items(planted.run_id, ["qa_grade"])
    items = items[items["verdict"] == "INCORRECT"]
    by_kind = {kind: mode for mode, (kind, _) in MODES.items()}
    members, sizes = [], {}
    for row in items.itertuples():
        mode = by_kind.get(truth[(row.datum_id, row.model)], -1)
        if mode == -1 and sum(1 for m in members if m[0] == -1) >= 2:
            continue
        members.append((mode, row.datum_id, row.model, "qa_grade", row.step, row.item_index, row.reason))
        sizes[mode] = sizes.get(mode, 0) + 1
    rows = [(m, " / ".join(words[:3]), words, sizes[m], None) for m, (_, words) in MODES.items()]
    rows.append((-1, "(unsorted: fits no mode)", [], sizes[-1], None))
    params = {"asked": asked(None, FailureRule(), 0, PACKAGED, SAMPLE, None), "units": ["qa_grade"],
              "rule": FailureRule().as_params(), "seed": 0, "model": PACKAGED, "sample": SAMPLE, "min_size": 5,
              "dims": 8, "join": 0.5, "failing": len(members), "embedded": len(members), "handed_off": 0,
              "noise_joined": 0}
    store.failures.write_failure_modes(planted.run_id, METHOD, params, rows, members)
    store.close()
    return planted.run_id


def words_of(body: dict) -> str:
    """The distinctive words the naming prompt shows."""
    text = body["messages"][-1]["content"]
    return text.split("\n")[2]


def namer(special: dict[str, Any] | None = None) -> Callable[[dict], Any]:
    """A judge naming each mode after its first word, or as ``special`` says for a mode's first word."""
    def reply(body: dict) -> Any:
        first = words_of(body).split(",")[0].strip()
        got = (special or {}).get(first)
        return got if got is not None else {"name": f"the answer gets the {first} wrong"}
    return reply


def judge_flags(server: JudgeServer, db: Path, *extra: str) -> list[str]:
    return ["--db", str(db), "--judge-base-url", server.url, "--judge-model", "judge", "--timeout", "5",
            "--retries", "1", *extra]


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEXTGEN_EVAL_JUDGE_API_KEY", "sk-names")


def test_names_are_estimated_asked_once_per_mode_stored_and_cached(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "f.duckdb"
    run_id = make_run(db)
    with JudgeServer(responder=namer()) as server:
        args = ["failures", str(run_id), "--name-with-judge", *judge_flags(server, db)]
        assert main([*args, "--dry-run"]) == 0
        out = capsys.readouterr().out
        assert "judge names: 3 mode(s), 3 call(s) to make, 0 cached" in out and server.count(None) == 0
        assert main(args) == 0
        out = capsys.readouterr().out
        assert server.count(CHAT) == 3  # one per mode; the unsorted judgements are no mode
        assert "mode 0: the answer gets the refund wrong  (" in out and "words: refund / policy / fabricated)" in out
        assert "names by the judge judge" in out
        # the prompt shows the mode's words and 3-5 of its reasons, fenced
        sent = {words_of(r.body).split(",")[0]: r.body["messages"][-1]["content"] for r in server.recorded()}
        assert 3 <= sent["refund"].count("Reason ") <= 5 and "refund" in sent["refund"].split("Reason 1")[1]
        store = Store(db)
        table = store.failures.failure_modes(run_id).set_index("mode")
        assert table.loc[0, "judge_name"] == "the answer gets the refund wrong"
        assert table.loc[0, "name"] == "refund / policy / fabricated"  # the word name kept beside it
        assert pd.isna(table.loc[-1, "judge_name"])
        assert int(store.get_run(run_id)["judge_calls"]) == 3  # the naming is part of the run's usage
        members = len(store.failures.failure_members(run_id))
        store.close()
        # again: every name from the cache, no call, the same names, nothing lost
        assert main(args) == 0
        out = capsys.readouterr().out
        assert server.count(CHAT) == 3 and "3 call(s) to make" not in out and "0 call(s) to make, 3 cached" in out
        store = Store(db)
        assert store.failures.failure_modes(run_id).set_index("mode").loc[0, "judge_name"] == \
            "the answer gets the refund wrong"
        assert len(store.failures.failure_members(run_id)) == members
        assert int(store.get_run(run_id)["judge_calls"]) == 3
        modes = stored_modes(store, run_id)
        report = build_report(store, run_id)["failure_modes"]
        store.close()
    rates = modes.rates()
    assert set(rates["name"]) >= {"the answer gets the refund wrong", "the answer gets the date wrong"}
    first = report["modes"][0]  # the report names the mode as the page and the command do, the word name beside
    assert (first["name"], first["word_name"]) == ("the answer gets the refund wrong", "refund / policy / fabricated")


def test_unusable_names_keep_the_word_name_and_say_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "f.duckdb"
    run_id = make_run(db)
    special = {"refund": {"name": "   "}, "date": {"name": "x" * 2000},
               "refuses": {"name": "<b>**Refuses** to help</b>"}}
    with JudgeServer(responder=namer(special)) as server:
        assert main(["failures", str(run_id), "--name-with-judge", *judge_flags(server, db)]) == 0
    out = capsys.readouterr().out
    assert "mode 0: refund / policy / fabricated  (" in out
    assert "no judge's name: the judge's name was empty" in out
    assert f"no judge's name: the judge's name was 2000 characters long (at most {MAX_NAME} are kept)" in out
    assert "mode 2: Refuses to help  (" in out and "<b>" not in out
    store = Store(db)
    modes = stored_modes(store, run_id)
    store.close()
    assert modes.naming_note(1).startswith("the judge's name was 2000 characters")
    assert modes.title(0) == "refund / policy / fabricated" and modes.title(2) == "Refuses to help"


def test_a_judge_that_times_out_keeps_the_word_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "f.duckdb"
    run_id = make_run(db)
    with JudgeServer(responder=namer({"date": Fault.hang(3.0)})) as server:
        args = ["failures", str(run_id), "--name-with-judge", *judge_flags(server, db)]
        args[args.index("--timeout") + 1], args[args.index("--retries") + 1] = "0.5", "0"
        assert main(args) == 0
    out = capsys.readouterr().out
    assert "mode 1: date / wrong / year  (" in out
    assert "no judge's name: the judge call failed: the judge did not answer within 0.5 s" in out
    assert "mode 0: the answer gets the refund wrong" in out  # the others are named all the same


def test_the_spending_cap_stops_naming_and_counts_what_the_run_spent(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "f.duckdb"
    run_id = make_run(db)
    with JudgeServer(responder=namer()) as server:
        args = ["failures", str(run_id), "--name-with-judge", *judge_flags(server, db), "--concurrency", "1"]
        assert main([*args, "--max-calls", "1"]) == 0
        assert server.count(CHAT) == 1
        out = capsys.readouterr().out
        assert out.count("no judge's name: not asked: budget reached: 1 judge calls (--max-calls)") == 2
        # the run has spent 1 call now: a cap of 1 admits nothing more; a cap of 3 the two left (one is cached)
        assert main([*args, "--max-calls", "1"]) == 0 and server.count(CHAT) == 1
        capsys.readouterr()
        assert main([*args, "--max-calls", "3"]) == 0 and server.count(CHAT) == 3
        assert "no judge's name" not in capsys.readouterr().out


def test_naming_needs_a_judge_and_the_dry_run_needs_naming(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("TEXTGEN_EVAL_JUDGE_MODEL", "TEXTGEN_EVAL_JUDGE_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    db = tmp_path / "f.duckdb"
    run_id = make_run(db)
    assert main(["failures", str(run_id), "--name-with-judge", "--db", str(db)]) == 2
    assert "--name-with-judge needs a judge" in capsys.readouterr().err
    assert main(["failures", str(run_id), "--dry-run", "--db", str(db)]) == 2
    assert "give both" in capsys.readouterr().err


def test_clean_and_request_units() -> None:
    assert clean("  Invents a refund policy. ") == ("Invents a refund policy", None)
    assert clean("&lt;i&gt;wrong date&lt;/i&gt;") == ("wrong date", None)
    assert clean("<script></script>") == (None, "the judge's name was empty once its markup was removed")
    assert clean(None) == (None, "the judge's reply holds no name")
    req = request(["a"], ["r" * 1000] * 7)
    text = req.messages[-1]["content"]
    assert text.count("Reason ") == 5 and "r" * 297 + "..." in text and "r" * 298 not in text
