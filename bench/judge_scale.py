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
  used: calls (the upper end of the printed range), prompt and completion
  tokens, each with its error. The loopback reports usage as an OpenAI endpoint
  bills it (messages with their framing, plus the response schema), counted with
  GPT-2's pre-tokenizer pieces (see :func:`tokens`); the estimate uses the same
  offline rule (``prompting.estimate_tokens``), so the prompt error measures the
  estimate's structure (what it renders and counts), not the rule. Replies give
  the one-sentence reason per verdict the prompts ask for (see :func:`explained`),
  so completions are sized like a real judge's, not the test judge's "scripted".

    python bench/judge_scale.py [--datums 50] [--rpm 600] [--latency 0.05] [--ray]

With ``--ray`` the rate-limited run is repeated with ``--engine ray`` on a local
2-CPU cluster: the workers share one limiter actor, so the rate and the 429
share should match the local run's.
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
from scripted_judge import rule_reply  # noqa: E402
from textgen_core.evaluate import evaluate  # noqa: E402
from textgen_core.judge.engine import estimate  # noqa: E402
from textgen_core.judge.settings import JudgeSettings  # noqa: E402
from textgen_core.registry import resolve_params  # noqa: E402
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


def explained(reply: Any) -> Any:
    """The reply with each reason a sentence, as a real judge writes it (the test judge writes "scripted")."""
    if isinstance(reply, list):
        return [explained(r) for r in reply]
    if not isinstance(reply, dict):
        return reply
    out = {k: explained(v) for k, v in reply.items()}
    if "reason" in out and "verdict" in out:
        out["reason"] = (f"Item {out.get('item')} is judged {out['verdict']} because its main terms "
                         f"{'are' if out['verdict'] in ('yes', 'supported', 'conveyed') else 'are not'} "
                         "found in the text it is checked against.")
    elif "reason" in out:
        out["reason"] = ("The text reads in a clear order, each sentence follows from the one before, and "
                         "nothing in it contradicts the rest, though it is short and leaves some points open.")
    return out


def responder(request: dict) -> Reply:
    """Rule-based verdicts (the test judge's) with reasons, usage counted as a BPE tokenizer would, roughly."""
    content = json.dumps(explained(rule_reply(request)))
    return Reply(content, prompt_tokens=prompt_tokens(request), completion_tokens=tokens(content))


def one_run(server: JudgeServer, rows: list[Datum], engine: str = "local", **overrides: Any) -> dict[str, Any]:
    settings = JudgeSettings(base_url=server.url, model="judge", api_key="sk-bench", **PRICES, **overrides)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "bench.duckdb")
        dataset_id = store.save_dataset(Dataset("bench", rows))
        started = time.perf_counter()
        run_id = evaluate(store, dataset_id, METRICS, judge=settings, engine=engine)
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
    parser.add_argument("--ray", action="store_true", help="also run the rate-limited run on a local 2-CPU Ray cluster")
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

    if args.ray:  # the same run on Ray: every worker takes its requests from the one shared limiter
        import ray

        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        with JudgeServer(responder=responder, latency=args.latency) as server:
            server.limits = RateLimit(rpm=args.rpm)
            on_ray = one_run(server, rows, engine="ray")
            requests, refused = server.count(CHAT), server.count(CHAT, status=429)
        ray.shutdown()
        calls = on_ray["run"]["judge_calls"]
        print(f"  --engine ray (2-CPU local cluster, one shared limiter): {calls} calls in {on_ray['wall']:.1f} s = "
              f"{calls / (on_ray['wall'] / 60) / args.rpm:.1%} of the allowed rate; {refused} of {requests} answered "
              f"429 ({refused / max(1, requests):.1%}); unscored {on_ray['unscored']}; scores identical to local: "
              f"{on_ray['scores'] == direct['scores']}")

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
    run = direct["run"]

    def error(guess: float, used: float) -> str:
        return f"{guess:g} vs {used:g} ({(guess - used) / used:+.1%})"

    print("estimate (target within 10%):")
    print(f"  calls {est.calls - est.dependent}-{error(est.calls, calls)} at the upper end")
    print(f"  prompt tokens {error(est.prompt_tokens, run['prompt_tokens'])}")
    print(f"  completion tokens {error(est.completion_tokens, run['completion_tokens'])}")
    print(f"  all tokens {error(est.prompt_tokens + est.completion_tokens, run['prompt_tokens'] + run['completion_tokens'])}"
          f"; cost {error(round(est.cost, 4), round(run['cost'], 4))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
