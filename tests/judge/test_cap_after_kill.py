"""A spending cap holds across kill -9 (#19.2e): what a killed run billed is in its totals when the reply
arrives, not when the reply's cell is written, so the resume's cap starts from it.

A real CLI process scores faithfulness (a claims step, then a verdict step) for one datum of ten models,
four requests at a time, against the loopback judge. Claims are answered at once; verdicts are held, so
the run sits with many claims answered and paid for and no cell written. It is killed with SIGKILL there
and resumed with the same ``--max-calls``: the endpoint must have received no more than the cap plus the
requests the dead process had on the wire (``--concurrency``), which nobody lived to count.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import textgen_core
from judge_server import CHAT, JudgeServer
from scripted_judge import rule_reply, step_of
from textgen_core.store import Store

ROOT = Path(textgen_core.__file__).resolve().parents[1]
MODELS = 10
DATUMS = 6
CONCURRENCY = 4
CAP = 80


def _write_data(path: Path) -> None:
    with path.open("w", encoding="utf-8") as out:
        for d in range(DATUMS):
            for m in range(MODELS):
                out.write(json.dumps({
                    "id": f"d{d}", "model": f"m{m}", "query": f"Where is tower {d}?",
                    "prediction": f"Tower {d} stands in Paris. Model {m} says it is tall.",
                    "references": [f"Tower {d} stands in Paris."],
                    "contexts": [f"Tower {d} stands in Paris.", "Paris is in France."]}) + "\n")


def _args(server: JudgeServer, db: Path, *args: str) -> list[str]:
    return [*args, "--db", str(db), "--judge-base-url", server.url, "--judge-model", "judge", "--concurrency",
            str(CONCURRENCY), "--timeout", "30", "--max-calls", str(CAP)]


def test_kill_9_then_resume_keeps_the_endpoint_within_the_cap(tmp_path: Path, cli_main) -> None:
    data, db = tmp_path / "data.jsonl", tmp_path / "runs.duckdb"
    _write_data(data)
    release = threading.Event()

    def latency(body: dict) -> float:  # verdicts wait until the killed process is gone
        if step_of(body) == "faithfulness":
            release.wait(30)
        return 0.0

    env = {**os.environ, "TEXTGEN_EVAL_JUDGE_API_KEY": "sk-kill", "PYTHONPATH": str(ROOT)}
    with JudgeServer(responder=rule_reply, latency=latency) as server:
        process = subprocess.Popen([sys.executable, "-m", "textgen_core", *_args(server, db, "run", str(data), "--metrics", "faithfulness")], cwd=tmp_path,
                                   env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 60
            last, since = -1, time.monotonic()
            while True:  # until every slot holds a verdict: the claims answered stop growing
                answered = sum(1 for r in server.recorded(CHAT) if step_of(r.body) == "claims" and r.status == 200)
                if answered != last:
                    last, since = answered, time.monotonic()
                # one datum's ten claims at least (a second datum's may queue behind the held verdicts, by
                # scheduling), and a pause well past the writer's 0.2 s batch window: what was answered is committed
                elif answered >= 8 and time.monotonic() - since > 1.0:
                    break
                assert process.poll() is None, process.communicate()
                assert time.monotonic() < deadline, f"the run got {answered} claims answered"
                time.sleep(0.02)
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait(30)
        release.set()  # the held verdicts complete on the endpoint's side: billed, though nobody reads them
        time.sleep(0.3)
        first = server.count(CHAT)
        store = Store(db, read_only=True)
        run, cells = store.get_run(1), store.scores(1)
        store.close()
        answered_unwritten = first - CONCURRENCY - len(cells)  # replies of cells the killed run never wrote
        assert answered_unwritten >= 8, (first, len(cells))  # what the old accounting lost (+12% and more)
        assert run["judge_calls"] >= first - CONCURRENCY, (run["judge_calls"], first)  # the replies are counted

        # the resume runs in this process (the killed run is the real process that matters)
        again = cli_main(*_args(server, db, "resume", "1"), cwd=tmp_path, env={"TEXTGEN_EVAL_JUDGE_API_KEY": "sk-kill"})
        billed = server.count(CHAT)
    assert "budget reached" in again.stderr + again.stdout, again.stderr
    store = Store(db, read_only=True)
    record = store.get_run(1)
    store.close()
    recorded = record["judge_calls"]
    assert record["status"] == "interrupted"
    assert billed <= CAP + CONCURRENCY, (billed, first, recorded)  # was: the cap plus every unwritten reply
    assert recorded <= CAP and billed - recorded <= CONCURRENCY  # only the requests on the wire went uncounted
