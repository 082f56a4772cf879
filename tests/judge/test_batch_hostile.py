"""Batch mode against a hostile or unlucky endpoint (#19.1, #19.4): the key never leaves, nothing waits forever.

Real openai client against the loopback judge's Batch API, real DuckDB file.
"""

from __future__ import annotations

import json
import logging
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from judge_server import CHAT, JudgeServer
from local_servers import free_port
from textgen_core.errors import TextgenError
from textgen_core.evaluate import evaluate, resume
from textgen_core.judge.settings import JudgeSettings
from textgen_core.model import Dataset, Datum
from textgen_core.store import Store

KEY = "sk-hostile-0123456789abcdef"
METRICS = ["qa_grade"]


def rows(n: int = 4) -> list[Datum]:
    return [Datum(f"d{i}", "m", query=f"Capital number {i}?", prediction=f"City {i}.", references=(f"City {i}.",))
            for i in range(n)]


def grade(request: dict) -> dict:
    return {"reason": "same city", "grade": "CORRECT"}


def settings(url: str, **overrides: Any) -> JudgeSettings:
    values = {"timeout": 2.0, "retries": 1, "batch": True, "batch_poll": 0.02, "batch_settle": 0.1,
              "backoff": 0.01, **overrides}
    return JudgeSettings(base_url=url, model="judge", api_key=KEY, **values)


def everything_stored(store: Store, run_id: int) -> str:
    """Every text a user may see of the run: its record, cell reasons, verdicts, the long export."""
    frame = store.scores(run_id)
    return json.dumps(store.get_run(run_id), default=str) + frame.to_json() + json.dumps(
        store.judge_batches(run_id), default=str)


def run(db: Path, judge: JudgeSettings) -> tuple[Store, int | None, Exception | None]:
    store = Store(db)
    dataset_id = store.save_dataset(Dataset("d", rows()))
    try:
        return store, evaluate(store, dataset_id, METRICS, judge=judge), None
    except TextgenError as exc:
        return store, max(store.list_runs()["run_id"]), exc


def test_key_echoed_in_error_lines_reaches_no_cell_log_or_run(db_path: Path,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    with JudgeServer(responder=grade, api_key=KEY, echo_key_in_errors=True) as server:
        server.batches.delay = 0.05
        server.batches.line_error = lambda cid, body: 400  # every line refused, quoting the key
        with caplog.at_level(logging.INFO, logger="textgen_core"):
            store, run_id, error = run(db_path, settings(server.url))
        assert KEY.encode() in b"".join(server.batches.outputs)  # the error lines did quote the key
    stored = everything_stored(store, run_id)
    assert "scripted failure 400" in stored and "[redacted]" in stored  # the reason is kept, the key is not
    assert KEY not in stored and KEY not in caplog.text and (error is None or KEY not in str(error))


def test_key_echoed_by_a_failed_batch_and_a_refused_upload_is_scrubbed(db_path: Path, tmp_path: Path,
                                                                       caplog: pytest.LogCaptureFixture) -> None:
    with JudgeServer(responder=grade, api_key=KEY, echo_key_in_errors=True) as server:
        server.batches.outcomes.extend(["failed"] * 10)  # the batch's errors.data[].message quotes the key
        with caplog.at_level(logging.INFO, logger="textgen_core"):
            store, run_id, _ = run(db_path, settings(server.url))
        stored = everything_stored(store, run_id)
        assert "scripted validation failure" in stored and KEY not in stored
    # A wrong key: the upload is refused with "Incorrect API key provided: <the key sent>".
    wrong = "sk-wrong-key-abcdefghijklmnop"
    with JudgeServer(responder=grade, api_key=KEY, echo_key_in_errors=True) as server:
        with caplog.at_level(logging.INFO, logger="textgen_core"):
            store2, run2, error = run(tmp_path / "wrong.duckdb",
                                      JudgeSettings(base_url=server.url, model="judge", api_key=wrong, batch=True,
                                                    batch_poll=0.02, batch_settle=0.1, backoff=0.01, retries=1,
                                                    timeout=2.0))
        assert server.count("/v1/files", status=401) >= 1
    stored = everything_stored(store2, run2)
    assert error is not None and "Incorrect API key" in str(error)
    assert wrong not in stored + str(error) + caplog.text and KEY not in caplog.text


def test_a_reask_does_not_send_an_echoed_key_back(db_path: Path) -> None:
    answers: list[str] = []

    def leaky(request: dict) -> Any:
        first = len(request["messages"]) <= 2
        answers.append("first" if first else "again")
        return f"not json, but your key {KEY}" if first else grade(request)

    with JudgeServer(responder=leaky, api_key=KEY) as server:
        server.batches.delay = 0.05
        store, run_id, error = run(db_path, settings(server.url))
        assert error is None and len(server.batches.created) == 2  # the re-asks went out in a second batch
        sent = b"".join(server.batches.uploaded.values()).decode()
    assert "your key [redacted]" in sent and KEY not in sent  # the quoted reply is scrubbed
    assert store.scores(run_id)["value"].notna().all()
    assert KEY not in everything_stored(store, run_id)


def test_batch_mode_fails_fast_on_a_dead_endpoint(db_path: Path) -> None:
    started = time.monotonic()
    store, run_id, error = run(db_path, settings(f"http://127.0.0.1:{free_port()}/v1"))
    elapsed = time.monotonic() - started
    assert error is not None and "unreachable" in str(error), error
    assert store.get_run(run_id)["status"] == "failed" and elapsed < 30


def test_a_batch_that_never_finishes_stops_interrupted_and_resume_takes_it_over(db_path: Path) -> None:
    with JudgeServer(responder=grade, api_key=KEY) as server:
        server.batches.delay = 1.5  # still running when --batch-wait (0.5 s) ends
        store, run_id, error = run(db_path, settings(server.url, batch_wait=0.5))
        run_row = store.get_run(run_id)
        assert error is None and run_row["status"] == "interrupted", run_row
        assert "still running after 0.5 s" in run_row["error"] and "resume" in run_row["error"]
        assert len(server.batches.created) == 1 and store.scores(run_id).empty
        server.batches.delay = 0.0  # the pending batch has finished by now
        # resume WITHOUT batch mode: the pending batch is taken over, nothing is paid twice
        resume(store, run_id, judge=settings(server.url, batch=False))
        assert len(server.batches.created) == 1 and server.count(CHAT) == 0
        assert store.get_run(run_id)["status"] == "finished"
        assert store.scores(run_id)["value"].tolist() == [1.0] * 4


def test_duplicate_custom_id_lines_are_an_error_not_last_wins(db_path: Path) -> None:
    with JudgeServer(responder=grade, api_key=KEY) as server:
        server.batches.delay = 0.05
        server.batches.duplicate = {"reason": "other city", "grade": "INCORRECT"}
        store, run_id, _ = run(db_path, settings(server.url, retries=0))
    frame = store.scores(run_id)
    assert frame["value"].isna().all(), frame  # neither 1.0 nor the 0.0 of the second line
    assert frame["reason"].str.contains("more than one line for this request").all()


def test_batch_mode_against_an_endpoint_that_accepts_and_never_answers_fails_fast(db_path: Path) -> None:
    with socket.socket() as listener:  # accepts connections (the kernel's backlog) and never says a word
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
        started = time.monotonic()
        store, run_id, error = run(db_path, settings(url, timeout=0.2, retries=1))
        elapsed = time.monotonic() - started
    assert error is not None and store.get_run(run_id)["status"] == "failed", (error, store.get_run(run_id))
    assert elapsed < 30, elapsed  # bounded by the timeout and retries, like direct mode
    cells = store.scores(run_id)  # none scored: each says why, none counts as a score
    assert cells["value"].isna().all() and cells["reason"].str.contains("unreachable").all()


def test_an_endpoint_without_delete_files_is_asked_once_and_said_at_once(db_path: Path,
                                                                        caplog: pytest.LogCaptureFixture) -> None:
    """#34.15: DELETE /files answered 501 cost about 95 s per batch (8 retries per file), said only at the end."""
    with JudgeServer(responder=grade, api_key=KEY) as server:
        server.batches.delay = 0.02
        server.batches.delete_status = 501
        started = time.monotonic()
        with caplog.at_level(logging.WARNING, logger="textgen_core"):
            store, run_id, error = run(db_path, settings(server.url))
        took = time.monotonic() - started
        deletes = [r.path for r in server.recorded(None) if r.path.startswith("DELETE ")]
    assert error is None and all(v is not None for v in store.scores(run_id)["value"])
    assert len(deletes) == 1, deletes  # tried once: the endpoint said it does not delete files
    said = [r.getMessage() for r in caplog.records if "does not delete files" in r.getMessage()]
    assert len(said) == 1 and "501" in said[0] and "delete them there" in said[0]
    assert took < 20, took  # was ~95 s of retries per batch
