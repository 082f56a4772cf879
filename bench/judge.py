"""Judge benchmark: our engine against valor-lite on one loopback judge with 50 ms latency.

Both systems score the same 200 datums (one reference, three contexts) with their
full LLM-judge suite against the same OpenAI-compatible server, which runs in a
child process so that it does not share the interpreter lock with the clients.
Printed per system: judge calls per datum, wall time, calls per second; then the
ratios and our re-run, which must make no call at all. A short untimed warm-up
(16 other datums) comes first, so no system pays for the judge's first
connections.

valor-lite is installed on demand (``pip install valor-lite``; benchmark only) and
driven through its OpenAI client with OPENAI_BASE_URL pointed at the server. Its
users run it as it comes: one judge call after another. That is the headline
comparison. Sequential, 200 datums take about 3 minutes, so a seeded sample
(``--valor-sample``, 40 datums) is timed and the time per datum is extrapolated
to all datums; the output says so. A second line gives valor-lite a pool of
``--concurrency`` threads, one datum each: a generous variant it does not ship.

    python bench/judge.py [--datums 200] [--latency 0.05] [--concurrency 32]
                          [--valor-sample 40] [--seed 0] [--skip-valor]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for _path in (ROOT, ROOT / "tests"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from textgen_core.model import Dataset, Datum  # noqa: E402

# -- the judge: our prompts by rule (see tests/scripted_judge.py), valor-lite's by shape -------

#: Item lists a valor-lite verdict prompt can end with, in the order to look for them.
_VALOR_LISTS = ("Claims", "Ground Truth Statements", "Opinions", "Statements", "Context List")


def _valor_section(prompt: str, header: str) -> list[str]:
    """The Python list literal printed under ``header`` in the part after the last worked example."""
    tail = prompt[prompt.rfind("END OF EXAMPLE"):]
    match = re.search(rf"(?m)^{re.escape(header)}:\n(.*?)\n\n", tail + "\n\n", re.DOTALL)
    if not match:
        return []
    try:
        value = ast.literal_eval(match.group(1).strip())
    except (ValueError, SyntaxError):
        return [line for line in match.group(1).splitlines() if line.strip()]
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def valor_reply(prompt: str) -> str:
    """A valid reply to one of valor-lite's prompts (we only need the shape to be right)."""
    tail = prompt[prompt.rfind("END OF EXAMPLE"):]
    if "Respond with just the number" in prompt:
        return "4"
    text = re.search(r"(?ms)^Text:\n(.*?)\n\nJSON:", tail)
    for marker, key in (("FACTUAL CLAIMS", "claims"), ("list of OPINIONS", "opinions"), ("list of STATEMENTS", "statements")):
        if marker in prompt and text:
            parts = [s for s in re.split(r"(?<=[.!?])\s+", text.group(1).strip()) if s]
            return json.dumps({key: parts})
    if "Prediction Statements:" in tail:
        return json.dumps({"TP": _valor_section(prompt, "Prediction Statements"), "FP": [], "FN": []})
    items = next((found for header in _VALOR_LISTS for found in [_valor_section(prompt, header)] if found), [])
    return json.dumps({"verdicts": [{"analysis": "benchmark", "verdict": "yes"} for _ in items]})


def responder(request: dict) -> Any:
    from scripted_judge import SYSTEMS, rule_reply

    messages = request.get("messages") or []
    if messages and messages[0].get("content") in SYSTEMS:
        return rule_reply(request)
    return valor_reply(str(messages[-1].get("content", "")))


def serve(latency: float, port_file: str) -> None:
    """Child process: run the loopback judge until stdin closes; GET /stats returns request counts."""
    import judge_server

    def do_get(handler: Any) -> None:
        if handler.path.rstrip("/") == "/stats":
            chats = handler.server_state.recorded(judge_server.CHAT)
            chars = sum(len(r.prompt_text) + len(json.dumps((r.body or {}).get("response_format") or "",
                                                            separators=(",", ":")))
                        for r in chats)  # every message, plus the response schema as the SDK sends it (compact)
            handler._send_json(200, {"all": handler.server_state.count(None), "chars": chars})
        else:
            handler._error(404, f"no route {handler.path}")

    judge_server._Handler.do_GET = do_get  # (its listen backlog takes 64+ connections at once)
    with judge_server.JudgeServer(responder=responder, latency=latency) as server:
        Path(port_file).write_text(server.url)
        sys.stdin.read()


class Judge:
    """The server child process, seen from the benchmark."""

    def __init__(self, latency: float) -> None:
        self._tmp = tempfile.TemporaryDirectory()
        port_file = os.path.join(self._tmp.name, "url")
        self.proc = subprocess.Popen([sys.executable, __file__, "--serve", port_file, "--latency", str(latency)],
                                     stdin=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while not os.path.exists(port_file) or not Path(port_file).read_text():
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError("the loopback judge did not start")
            time.sleep(0.05)
        self.url = Path(port_file).read_text()

    def stats(self) -> tuple[int, int]:
        """(requests so far, prompt characters so far)."""
        with urllib.request.urlopen(self.url.removesuffix("/v1") + "/stats", timeout=10) as reply:
            body = json.load(reply)
        return int(body["all"]), int(body["chars"])

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)
        self._tmp.cleanup()


# -- data and the two systems -----------------------------------------------------------------------------

def datums(n: int) -> list[Datum]:
    return [Datum(
        f"q{i:04d}", "model", query=f"What do we know about topic {i}?",
        prediction=f"Topic {i} was described in {1900 + i}. I think topic {i} is always fascinating. "
                   f"It has {i % 7 + 2} main parts.",
        references=(f"Topic {i} was described in {1900 + i}. It has {i % 7 + 2} main parts.",),
        contexts=(f"Topic {i} was first described in {1900 + i}.", f"Topic {i} has {i % 7 + 2} main parts.",
                  f"The weather on day {i} was mild."),
    ) for i in range(n)]


def run_ours(judge: Judge, rows: list[Datum], concurrency: int, names: tuple[str, ...], *,
             memory_cache: bool = False) -> dict[str, float]:
    from textgen_core.judge.client import JudgeClient
    from textgen_core.judge.engine import run_judge_metrics
    from textgen_core.judge.settings import JudgeSettings
    from textgen_core.store import Store

    suite = {name: {} for name in names}
    settings = JudgeSettings(base_url=judge.url, model="judge", api_key="sk-bench", concurrency=concurrency)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "bench.duckdb")
        dataset_id = store.save_dataset(Dataset("bench", rows))

        def one_run() -> tuple[int, int, float, int]:
            run_id = store.create_run(dataset_id, list(suite), {}, {}, ["model"], settings.public())
            client = JudgeClient(settings, None if memory_cache else store)
            (calls, chars), started, cpu = judge.stats(), time.perf_counter(), os.times()
            run_judge_metrics(store, run_id, rows, suite, settings, client=client)
            wall = time.perf_counter() - started
            cpu_s = sum(os.times()[:2]) - sum(cpu[:2])  # this process only: the judge is a child process
            unscored = int(store.scores(run_id)["value"].isna().sum())
            after, after_chars = judge.stats()
            return after - calls, after_chars - chars, wall, unscored, cpu_s

        calls, chars, wall, unscored, cpu_s = one_run()
        again, _, again_wall, _, _ = one_run() if not memory_cache else (0, 0, 0.0, 0, 0.0)
        store.close()
    return {"calls": calls, "chars": chars, "wall": wall, "unscored": unscored, "rerun_calls": again,
            "rerun_wall": again_wall, "cpu": cpu_s}


def ensure_valor() -> str | None:
    """None when valor-lite is importable (installing it if needed), else why not."""
    try:
        import valor_lite.text_generation  # noqa: F401
        return None
    except ImportError:
        pass
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "valor-lite"], capture_output=True, text=True)
    if done.returncode != 0:
        return f"pip install valor-lite failed: {done.stderr.strip()[-300:]}"
    try:
        import valor_lite.text_generation  # noqa: F401
    except ImportError as exc:
        return f"valor-lite installed but does not import: {exc}"
    return None


VALOR_METRICS = ("answer_correctness", "answer_relevance", "bias", "context_precision", "context_recall",
                 "context_relevance", "faithfulness", "hallucination", "summary_coherence", "toxicity")


def run_valor(judge: Judge, rows: list[Datum], concurrency: int) -> dict[str, float]:
    os.environ["OPENAI_BASE_URL"] = judge.url
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench")
    from valor_lite.text_generation import Context, Evaluator, QueryResponse

    evaluator = Evaluator.openai(model_name="judge")
    errors: list[str] = []

    def score(row: Datum) -> None:
        item = QueryResponse(query=row.query, response=row.prediction,
                             context=Context(groundtruth=list(row.references), prediction=list(row.contexts)))
        for name in VALOR_METRICS:
            metric = getattr(evaluator, f"compute_{name}")(item)
            value = metric.to_dict() if hasattr(metric, "to_dict") else {}
            if "error" in str(value.get("type", "")).lower():
                errors.append(f"{name}: {value}")

    (before, chars), started = judge.stats(), time.perf_counter()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        list(pool.map(score, rows))
    wall = time.perf_counter() - started
    after, after_chars = judge.stats()
    return {"calls": after - before, "chars": after_chars - chars, "wall": wall, "unscored": len(errors)}


def _line(name: str, got: dict[str, float], n: int, note: str = "") -> str:
    calls, wall = got["calls"], got["wall"]
    return (f"{name:<40} {calls / n:>9.2f} {got['chars'] / n:>10.0f} {wall:>9.2f} {calls / wall:>9.1f} "
            f"{int(got['unscored']):>9d}  {note}").rstrip()


#: The targets of issue #9: wall time against valor-lite as its users run it, calls per datum with the
#: seed definitions (valor-lite's ten metrics), and our share of valor-lite's prompt characters.
TARGET_RATIO = 20.0
TARGET_CALLS = 14
TARGET_CHARS = 0.5


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datums", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--valor-sample", type=int, default=40,
                        help="datums valor-lite scores sequentially (time per datum is extrapolated)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the valor-lite sample")
    parser.add_argument("--skip-valor", action="store_true")
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.latency, args.serve)
        return 0

    n = args.datums
    rows = datums(n)
    judge = Judge(args.latency)
    try:
        print(f"loopback judge: {args.latency * 1000:.0f} ms latency, {n} datums (1 reference, 3 contexts), "
              f"concurrency {args.concurrency}\n")
        print(f"{'system':<40} {'calls/dat':>9} {'chars/dat':>10} {'wall s':>9} {'calls/s':>9} {'unscored':>9}")
        # Warm-up, not timed: the judge's first connections and threads, and our first code paths,
        # cost ~0.7 s once per process whichever system comes first.
        run_ours(judge, [replace(r, datum_id=f"warm-{r.datum_id}", query=f"Warm-up: {r.query}") for r in rows[:16]],
                 args.concurrency, VALOR_METRICS, memory_cache=True)
        ours = run_ours(judge, rows, args.concurrency, VALOR_METRICS)
        print(_line("textgen-eval (valor-lite's 10 metrics)", ours, n))
        full = run_ours(judge, [replace(r, datum_id=f"all-{r.datum_id}") for r in rows], args.concurrency,
                        VALOR_METRICS + ("coherence", "qa_grade"), memory_cache=True)
        print(_line("textgen-eval (12 metrics, new texts)", full, n))
        print(f"\nCPU of the client per judge call (run, cache, store writes; the judge is another process): "
              f"{ours['cpu'] / ours['calls'] * 1000:.2f} ms (10 metrics), {full['cpu'] / full['calls'] * 1000:.2f} ms "
              "(12 metrics, replies cached in memory)\n")
        why = "skipped (--skip-valor)" if args.skip_valor else ensure_valor()
        sequential = pooled = None
        if why is None:
            try:
                sample = sorted(random.Random(args.seed).sample(range(n), min(args.valor_sample, n)))
                timed = run_valor(judge, [rows[i] for i in sample], 1)
                scale = n / len(sample)  # extrapolate the sample's time per datum to every datum
                sequential = {k: timed[k] * scale for k in ("calls", "chars", "wall")} | {"unscored": timed["unscored"]}
                note = (f"({len(sample)} datums, seed {args.seed}, timed: {timed['wall']:.1f} s; x{scale:g})"
                        if len(sample) < n else "")
                print(_line("valor-lite (10 metrics, sequential)", sequential, n, note))
                pooled = run_valor(judge, rows, args.concurrency)
                print(_line(f"valor-lite ({args.concurrency} threads, not its own)", pooled, n))
            except Exception as exc:  # noqa: BLE001 - report and still print ours
                why = f"valor-lite failed: {type(exc).__name__}: {exc}"
        if sequential is not None:
            ratio = sequential["wall"] / ours["wall"]
            print(f"\nwall-time ratio valor-lite sequential / textgen-eval: {ratio:.1f}x "
                  f"(target {TARGET_RATIO:g}x: {'met' if ratio >= TARGET_RATIO else 'NOT met'})")
            if pooled is not None:
                print(f"wall-time ratio valor-lite {args.concurrency} threads / textgen-eval: "
                      f"{pooled['wall'] / ours['wall']:.1f}x")
            per_datum = ours["calls"] / n
            print(f"calls per datum (10 metrics): valor-lite {sequential['calls'] / n:.1f}, textgen-eval "
                  f"{per_datum:.1f} (target <= {TARGET_CALLS}: {'met' if per_datum <= TARGET_CALLS else 'NOT met'})")
            share = ours["chars"] / sequential["chars"]
            print(f"prompt characters per datum: valor-lite {sequential['chars'] / n:.0f}, textgen-eval "
                  f"{ours['chars'] / n:.0f} = {share:.0%} (target <= {TARGET_CHARS:.0%}: "
                  f"{'met' if share <= TARGET_CHARS else 'NOT met'})")
        else:
            print(f"\nvalor-lite: {why}")
        print(f"\nre-run of the finished run: {ours['rerun_calls']} judge calls in {ours['rerun_wall']:.2f} s")
        return 0 if ours["rerun_calls"] == 0 else 1
    finally:
        judge.close()


if __name__ == "__main__":
    sys.exit(main())
