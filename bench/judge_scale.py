"""Judge at real-endpoint scale: a rate-limited endpoint, the Batch API, and the pre-run estimate.

Against the loopback judge (tests/judge_server.py) with 50 ms latency, limited to
``--rpm`` requests per minute (429 + Retry-After + x-ratelimit-* headers beyond
it), one run of ``--datums`` datums with five judge metrics, default settings:

* **Rate limit**: calls, wall time, the share of the allowed rate reached
  (calls per minute / rpm; target >= 85%), the share of requests answered 429
  (target <= 5%) and the unscored cells (target 0).
* **Batch mode** on the same data and a fresh database: identical scores, direct
  chat calls (target 0), batches per run (extraction and verdict rounds).
* **Estimate**: ``textgen-eval run --dry-run``'s numbers against what the run
  used: calls (the upper end of the printed range) and tokens. The loopback
  reports usage as an OpenAI endpoint bills it (messages with their framing,
  plus the response schema), counted with GPT-2's pre-tokenizer pieces (see
  :func:`tokens`), close to what a BPE tokenizer counts; the estimate counts 4
  characters per token. The test judge's replies are terse (no reasons), so
  the completion side says little about a real judge.

    python bench/judge_scale.py [--datums 50] [--rpm 600] [--latency 0.05]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for _path in (ROOT, ROOT / "tests"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from judge import datums  # noqa: E402 - bench/judge.py: the same 50 datums shape
from judge_scripting import Reply, prompt_text  # noqa: E402
from judge_server import CHAT, JudgeServer, RateLimit  # noqa: E402
from test_judge_metrics_scripted import rule_reply  # noqa: E402
from textgen_core.evaluate import evaluate  # noqa: E402
from textgen_core.judge.engine import estimate  # noqa: E402
from textgen_core.judge.settings import JudgeSettings  # noqa: E402
from textgen_core.metrics.registry import resolve_params  # noqa: E402
from textgen_core.model import Dataset, Datum  # noqa: E402
from textgen_core.store import Store  # noqa: E402

METRICS = ["faithfulness", "answer_relevance", "coherence", "bias", "context_precision"]
PRICES = {"price_prompt_per_million": 2.5, "price_completion_per_million": 10.0}


#: GPT-2's pre-tokenizer: BPE tokenizers split text at these pieces first, then split rare pieces further,
#: so counting pieces (plus one per 8 letters past the first 8 of a long word) approximates a real count.
_PIECES = re.compile(r"""'(?:[sdmt]|ll|ve|re)| ?[^\W\d_]+| ?\d{1,3}| ?[^\s\w]+|\s+(?!\S)|\s+""")


def tokens(text: str) -> int:
    pieces = _PIECES.findall(text)
    return max(1, len(pieces) + sum(max(0, len(p.strip()) - 1) // 8 for p in pieces))


def prompt_tokens(request: dict) -> int:
    """What an OpenAI endpoint bills for a chat request: its messages (3 tokens of framing each, 3 to start the
    reply) and, with structured output, the response schema, which it adds to the prompt."""
    schema = (request.get("response_format") or {}).get("json_schema")
    messages = request.get("messages") or []
    return tokens(prompt_text(request)) + 3 * len(messages) + 3 + (tokens(json.dumps(schema)) if schema else 0)


def responder(request: dict) -> Reply:
    """Rule-based verdicts (the test judge's), with usage counted as a BPE tokenizer would, roughly."""
    content = json.dumps(rule_reply(request))
    return Reply(content, prompt_tokens=prompt_tokens(request), completion_tokens=tokens(content))


def one_run(server: JudgeServer, rows: list[Datum], **overrides: Any) -> dict[str, Any]:
    settings = JudgeSettings(base_url=server.url, model="judge", api_key="sk-bench", **PRICES, **overrides)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "bench.duckdb")
        dataset_id = store.save_dataset(Dataset("bench", rows))
        started = time.perf_counter()
        run_id = evaluate(store, dataset_id, METRICS, judge=settings)
        wall = time.perf_counter() - started
        run = store.get_run(run_id)
        frame = store.scores(run_id)
        scores = {(r.datum_id, r.score): (None if r.value != r.value else r.value) for r in frame.itertuples()}
        store.close()
    return {"run": run, "wall": wall, "scores": scores, "unscored": sum(v is None for v in scores.values())}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datums", type=int, default=50)
    parser.add_argument("--rpm", type=int, default=600)
    parser.add_argument("--latency", type=float, default=0.05)
    args = parser.parse_args()
    rows = datums(args.datums)

    # -- estimate (nothing is sent) -----------------------------------------------------------
    with JudgeServer(responder=responder, latency=args.latency) as server:
        settings = JudgeSettings(base_url=server.url, model="judge", api_key="sk-bench", **PRICES)
        est = estimate(rows, {m: resolve_params([m], {})[m] for m in METRICS}, settings, None)
        assert server.count(None) == 0

    # -- rate-limited direct run ----------------------------------------------------------------
    with JudgeServer(responder=responder, latency=args.latency) as server:
        server.limits = RateLimit(rpm=args.rpm)
        direct = one_run(server, rows)
        requests, refused = server.count(CHAT), server.count(CHAT, status=429)
    calls = direct["run"]["judge_calls"]
    reached = calls / (direct["wall"] / 60) / args.rpm
    print(f"rate limit {args.rpm} rpm, {args.latency * 1000:.0f} ms latency, {args.datums} datums x "
          f"{len(METRICS)} judge metrics, default settings:")
    print(f"  {calls} calls in {direct['wall']:.1f} s = {calls / direct['wall'] * 60:.0f} per minute: "
          f"{reached:.1%} of the allowed rate (target >= 85%)")
    print(f"  {refused} of {requests} requests answered 429 ({refused / max(1, requests):.1%}; target <= 5%), "
          f"unscored cells: {direct['unscored']} (target 0)")

    # -- batch mode on the same data -------------------------------------------------------------
    with JudgeServer(responder=responder, latency=args.latency) as server:
        server.limits = RateLimit(rpm=args.rpm)
        server.batches.delay = 0.5
        batch = one_run(server, rows, batch=True, batch_poll=0.1)
        lines = [len(server.batches.lines(b)) for b in server.batches.created]
        print(f"batch mode: {len(server.batches.created)} batches per run ({' + '.join(map(str, lines))} requests), "
              f"{server.count(CHAT)} direct chat calls (target 0), scores identical to direct: "
              f"{batch['scores'] == direct['scores']}, cost {batch['run']['cost']:.4f} vs direct "
              f"{direct['run']['cost']:.4f} ({batch['run']['cost'] / direct['run']['cost']:.2f}x)")

    # -- estimate against what the run used ------------------------------------------------------
    used_tokens = direct["run"]["prompt_tokens"] + direct["run"]["completion_tokens"]
    est_tokens = est.prompt_tokens + est.completion_tokens
    print(f"estimate: {est.calls - est.dependent}-{est.calls} calls vs {calls} made "
          f"({(est.calls - calls) / calls:+.1%} at the upper end); {est_tokens} tokens vs {used_tokens} used "
          f"({(est_tokens - used_tokens) / used_tokens:+.1%}: prompt {est.prompt_tokens} vs "
          f"{direct['run']['prompt_tokens']}, completion {est.completion_tokens} vs "
          f"{direct['run']['completion_tokens']}); cost {est.cost:.4f} vs {direct['run']['cost']:.4f} "
          f"(target within 10%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
