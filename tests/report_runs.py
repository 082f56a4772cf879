"""A hostile run for the report tests: judged by the scripted judge over the loopback server, with people's labels.

Its texts plant what a report must neutralise: a ``<script>`` that would set
``window.__pwned``, an ``<img onerror>``, a ``javascript:`` link, markdown, and an
API key (:data:`PLANTED_KEY`) in predictions, queries, references, metadata, a datum
id, the judge's reasons and a label's annotator. The run itself is judged with
another key, so the judge client's own scrub does not hide the planted one: only
the report's scrub can.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from judge_server import JudgeServer
from scripted_judge import ScriptedJudge
from textgen_core.compare.labels import import_labels
from textgen_core.evaluate import evaluate
from textgen_core.judge.settings import JudgeSettings
from textgen_core.model import Dataset, Datum
from textgen_core.store import Store

PLANTED_KEY = "sk-planted-report-key-4242"
SCRIPT = "<script>window.__pwned = 'script';</script>"
IMAGE = "<img src=x onerror=\"window.__pwned = 'img'\">"
LINK = "[click me](javascript:window.__pwned='link') <a href=\"javascript:window.__pwned='a'\">here</a>"
MARKDOWN = "**bold** _it_ # heading\n\n| a | b |\n|---|---|"
HOSTILE = [SCRIPT, IMAGE, LINK, MARKDOWN, f"my key is {PLANTED_KEY}", "</td></tr></table><script>window.__pwned=1"]
BASE, CANDIDATE = "base", "cand<i>x</i>"
METRICS = ["coherence", "faithfulness", "rouge"]


def hostile_rows(n: int) -> list[Datum]:
    """``n`` datums x two models; the candidate writes more sentences; every row carries a hostile text."""
    rows = []
    for i in range(n):
        bad = HOSTILE[i % len(HOSTILE)]
        datum_id = f"d{i:02d}" if i != 3 else f"d03-{PLANTED_KEY}"
        for model, extra in ((BASE, 0), (CANDIDATE, 1 + i % 3)):
            sentences = " ".join(f"Topic{i} fact {k}." for k in range(1 + (i % 2) + extra))
            rows.append(Datum(
                datum_id, model, query=f"What about topic{i}? {bad}", prediction=f"{sentences} {bad}",
                references=(f"Topic{i} fact 0. {bad}",), contexts=(f"Topic{i} fact 0. Topic{i} fact 1.",),
                metadata={"source": bad, "n": i}))
    return rows


def _poisoned(reply: Any) -> Any:
    """The judge's reply with every reason replaced by a hostile text (the planted key in it)."""
    if isinstance(reply, dict):
        return {k: (f"because {HOSTILE[len(k) % len(HOSTILE)]} {PLANTED_KEY} {SCRIPT}" if k == "reason"
                    else _poisoned(v)) for k, v in reply.items()}
    if isinstance(reply, list):
        return [_poisoned(v) for v in reply]
    return reply


def build_hostile_run(path: Path, n: int = 12) -> tuple[Store, int]:
    """A finished run of :data:`METRICS` over :func:`hostile_rows`, with coherence labels by two annotators."""
    scripted = ScriptedJudge()
    with JudgeServer(responder=lambda request: _poisoned(scripted(request))) as server:
        store = Store(path)
        dataset = store.save_dataset(Dataset("hostile <b>set</b>", hostile_rows(n)))
        settings = JudgeSettings(base_url=server.url, model="judge-<i>m</i>", api_key="sk-run-key-0000",
                                 concurrency=4, timeout=5.0, retries=1)
        run_id = evaluate(store, dataset, METRICS, judge=settings, workers=1)
    labels = path.with_name("labels.csv")
    cells = store.scores(run_id, scores=["coherence"]).dropna(subset=["value"])
    with labels.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(["id", "model", "value", "annotator"])
        for k, cell in enumerate(cells.itertuples()):
            if k % 4 != 3:
                person = min(5.0, max(1.0, cell.value + (1 if k % 3 == 0 else 0)))
                writer.writerow([cell.datum_id, cell.model, person, f"ann<script>{k % 2}"])
                writer.writerow([cell.datum_id, cell.model, cell.value, "second"])
    import_labels(store, run_id, labels, "coherence", sampling="random")
    return store, run_id
