"""Adding metrics to a stored run (`extend`): the run's dataset and judge, the same loop, the judge cache.

A real DuckDB file, the real openai client over HTTP to the loopback judge server.
"""

from __future__ import annotations

import importlib
import socket
import threading

import pytest
from judge_server import CHAT, JudgeServer
from scripted_judge import ScriptedJudge, suite_rows

from textgen_core import extend
from textgen_core.cli.main import main
from textgen_core.errors import ParameterError, StoreError, TextgenError
from textgen_core.evaluate import evaluate, resume
from textgen_core.judge.settings import JudgeSettings
from textgen_core.model import Dataset
from textgen_core.progress import Progress
from textgen_core.store import Store

loop = importlib.import_module("textgen_core.runs.loop")


def _cells(store: Store, run_id: int, metric: str) -> dict[tuple[str, str, str], float | None]:
    frame = store.scores(run_id)
    frame = frame[frame["metric"] == metric]
    return {(r.datum_id, r.model, r.score): r.value for r in frame.itertuples()}


@pytest.fixture
def server():
    with JudgeServer(responder=ScriptedJudge()) as running:
        yield running


def _judge(server: JudgeServer, model: str = "judge") -> JudgeSettings:
    return JudgeSettings(base_url=server.url, model=model, api_key="sk-test-extend", timeout=5.0)


def _stored_run(db_path, metrics=("rouge",), n=6, judge=None) -> tuple[Store, int, int]:
    store = Store(db_path)
    dataset_id = store.save_dataset(Dataset("rag", suite_rows(n, models=("a", "b"))))
    return store, dataset_id, evaluate(store, dataset_id, list(metrics), judge=judge, workers=1)


def test_extend_adds_lexical_and_judge_metrics_to_the_same_run_bit_identical_to_a_fresh_run(db_path, server):
    store, dataset_id, run_id = _stored_run(db_path)
    rouge_before = _cells(store, run_id, "rouge")
    created = store.get_run(run_id)["created_at"]
    assert extend(store, run_id, ["bleu", "coherence"], judge=_judge(server), workers=1) == run_id
    run = store.get_run(run_id)
    assert run["status"] == "finished" and run["dataset_id"] == dataset_id and run["created_at"] == created
    assert run["metrics"] == ["rouge", "bleu", "coherence"]
    assert {"bleu", "coherence"} <= set(run["signatures"]) and "judge:judge" in run["signatures"]["coherence"]
    assert run["judge"]["model"] == "judge" and "sk-test-extend" not in str(run)
    assert _cells(store, run_id, "rouge") == rouge_before  # the run's own cells untouched
    fresh = evaluate(store, dataset_id, ["bleu", "coherence"], judge=_judge(server), workers=1)
    assert _cells(store, run_id, "bleu") == _cells(store, fresh, "bleu")  # the same loop, the same numbers
    assert _cells(store, run_id, "coherence") == _cells(store, fresh, "coherence")
    assert all(v is not None for v in _cells(store, run_id, "coherence").values())
    aggregates = store.aggregates(run_id)
    assert set(aggregates["score"]) == set(store.aggregates(fresh)["score"])  # corpus BLEU of the added metric


def test_the_judge_cache_makes_a_repeated_ask_free(db_path, server):
    store, dataset_id, first = _stored_run(db_path)
    extend(store, first, ["coherence"], judge=_judge(server), workers=1)
    calls = server.count(CHAT)
    assert calls > 0
    second = evaluate(store, dataset_id, ["rouge"], workers=1)
    extend(store, second, ["coherence"], judge=_judge(server), workers=1)
    assert server.count(CHAT) == calls
    assert _cells(store, second, "coherence") == _cells(store, first, "coherence")


def test_a_metric_already_in_the_run_is_refused_and_nothing_changes(db_path):
    store, _, run_id = _stored_run(db_path, metrics=("rouge", "bleu"))
    before = store.get_run(run_id)
    with pytest.raises(ParameterError, match=r"already has bleu.*nothing was changed"):
        extend(store, run_id, ["exact_match", "bleu"])
    after = store.get_run(run_id)
    assert after["metrics"] == before["metrics"] and after["status"] == "finished"
    assert "exact_match" not in set(store.scores(run_id)["metric"])


def test_unknown_run_and_unknown_metric_are_refused_by_name(db_path):
    store, _, run_id = _stored_run(db_path)
    with pytest.raises(StoreError, match="no run with id 99"):
        extend(store, 99, ["bleu"])
    with pytest.raises(ParameterError, match="unknown metric 'blue'.*known metrics:.*bleu"):
        extend(store, run_id, ["blue"])
    with pytest.raises(ParameterError, match="at least one metric"):
        extend(store, run_id, [])
    assert store.get_run(run_id)["metrics"] == ["rouge"]


def test_a_metric_the_dataset_cannot_feed_is_refused_before_anything_changes(db_path):
    store = Store(db_path)
    rows = [r for r in suite_rows(3)]
    dataset_id = store.save_dataset(Dataset("no-contexts", [type(r)(r.datum_id, r.model, r.query, r.prediction,
                                                                    r.references) for r in rows]))
    run_id = evaluate(store, dataset_id, ["rouge"], workers=1)
    with pytest.raises(ParameterError, match="needs a judge|contexts"):
        extend(store, run_id, ["faithfulness"])
    assert store.get_run(run_id)["metrics"] == ["rouge"] and store.get_run(run_id)["status"] == "finished"


def test_a_judge_metric_without_a_judge_is_refused(db_path):
    store, _, run_id = _stored_run(db_path)
    with pytest.raises(ParameterError, match="needs a judge"):
        extend(store, run_id, ["coherence"])
    assert store.get_run(run_id)["metrics"] == ["rouge"]


def test_a_different_judge_is_refused_naming_the_difference(db_path, server):
    store, _, run_id = _stored_run(db_path, metrics=("coherence",), judge=_judge(server))
    with pytest.raises(ParameterError, match=r"another judge.*model: 'judge' -> 'other-judge'"):
        extend(store, run_id, ["answer_relevance"], judge=_judge(server, "other-judge"))
    assert store.get_run(run_id)["metrics"] == ["coherence"]
    # the run's own judge (a new key and timeout may change) is accepted
    same = JudgeSettings(base_url=server.url, model="judge", api_key="sk-another", timeout=9.0)
    extend(store, run_id, ["toxicity"], judge=same)
    assert store.get_run(run_id)["metrics"] == ["coherence", "toxicity"]


class _Forwarder:
    """A TCP port that forwards to the judge server once :meth:`start` is called (nothing listens before):
    the judge endpoint down, then back at the same address."""

    def __init__(self, target_port: int) -> None:
        self.target = target_port
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.listener: socket.socket | None = None

    def start(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", self.port))
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                near, _ = self.listener.accept()
            except OSError:
                return
            far = socket.create_connection(("127.0.0.1", self.target))
            for a, b in ((near, far), (far, near)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self) -> None:
        if self.listener is not None:
            self.listener.close()


def test_an_unreachable_judge_fails_the_extend_clearly_and_a_resume_fills_it(db_path, server):
    store, _, run_id = _stored_run(db_path)
    door = _Forwarder(server.port)
    judge = JudgeSettings(base_url=f"http://127.0.0.1:{door.port}/v1", model="judge", api_key="sk-unreached",
                          timeout=2.0, retries=1)
    with pytest.raises(TextgenError, match="unreachable") as failure:  # never a hang, never the key
        extend(store, run_id, ["coherence"], judge=judge, workers=1)
    assert "sk-unreached" not in str(failure.value)
    run = store.get_run(run_id)
    assert run["status"] == "failed" and run["metrics"] == ["rouge", "coherence"] and "resume" in run["error"]
    assert len(_cells(store, run_id, "rouge")) == 48  # the run's own cells are kept (4 ROUGE scores x 12)
    door.start()  # the endpoint is back at the same address: the resume finishes the extend
    try:
        resume(store, run_id, judge=judge)
    finally:
        door.close()
    assert store.get_run(run_id)["status"] == "finished"
    coherence = _cells(store, run_id, "coherence")
    assert len(coherence) == 12 and all(v is not None for v in coherence.values())


def test_an_interrupted_extend_is_finished_by_resume(db_path, monkeypatch):
    monkeypatch.setattr(loop, "CHUNK_SIZE", 4)
    store, dataset_id, run_id = _stored_run(db_path, n=10)

    def stop_after_first(p: Progress) -> None:
        if p.phase == "lexical" and p.done >= 4:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        extend(store, run_id, ["bleu"], progress=stop_after_first, workers=1)
    run = store.get_run(run_id)
    assert run["status"] == "interrupted" and run["metrics"] == ["rouge", "bleu"]
    assert 0 < len(_cells(store, run_id, "bleu")) < 20
    with pytest.raises(ParameterError, match=r"already has bleu.*interrupted.*textgen-eval resume"):
        extend(store, run_id, ["bleu"])
    with pytest.raises(ParameterError, match="interrupted, not finished"):
        extend(store, run_id, ["exact_match"])
    resume(store, run_id, workers=1)
    assert store.get_run(run_id)["status"] == "finished"
    fresh = evaluate(store, dataset_id, ["bleu"], workers=1)
    assert _cells(store, run_id, "bleu") == _cells(store, fresh, "bleu")
    assert store.aggregates(run_id).query("score == 'bleu'")["value"].tolist() == \
        store.aggregates(fresh).query("score == 'bleu'")["value"].tolist()


def test_the_command_extends_a_streamed_run(tmp_path, capsys):
    data = tmp_path / "outputs.csv"
    data.write_text("id,model,prediction,reference\n" + "".join(
        f"d{i},m{i % 2},the answer is {i},the answer is {i + i % 3}\n" for i in range(40)), encoding="utf-8")
    db = str(tmp_path / "x.duckdb")
    assert main(["--db", db, "run", str(data), "--metrics", "rouge", "--workers", "1"]) == 0
    capsys.readouterr()
    assert main(["--db", db, "extend", "1", "--metrics", "bleu,exact_match", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert "run 1 on dataset 'outputs': finished" in out and "exact_match" in out and "bleu" in out
    store = Store(db)
    assert store.get_run(1)["metrics"] == ["rouge", "bleu", "exact_match"] and len(store.list_runs()) == 1
    assert main(["--db", db, "extend", "1", "--metrics", "bleu"]) == 2
    assert "already has bleu" in capsys.readouterr().err
    assert main(["--db", db, "extend", "7", "--metrics", "bleu"]) == 2
    assert "no run with id 7" in capsys.readouterr().err
