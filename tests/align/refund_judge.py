"""A judge with a planted blind spot, and the people who see it (issue 32's test of alignment).

The judge (a responder for tests/judge_server.JudgeServer) rates an answer by the number of its sentences
(1-5), except that an answer mentioning a refund is rated 5 -- excellent -- unless the system prompt (the
criterion, its steps or its worked examples) speaks of refunds; then the refund answer gets its sentence count
too. Refund answers here are one sentence, so people rate them 1.

Asked to rewrite a criterion (the reflective call), it returns the criterion with one rule added for each thing
the disagreements shown to it have in common: a rule about refunds when a disagreement mentions one.

Also imported by bench/align.py.
"""

from __future__ import annotations

import random
import re
import threading
from collections import Counter
from typing import Any

from judge_scripting import request_schema
from scripted_judge import blocks, sentences
from textgen_core.model import Datum

CRITERION = {"name": "helpfulness", "title": "Helpfulness",
             "criteria": "Does the reply solve the customer's problem in full?",
             "inputs": ["query", "prediction"],
             "output": {"type": "rating", "min": 1, "max": 5}}
REFUND_RULE = "A reply that only offers a refund, without solving the problem, is poor."
TOPICS = ("parcel", "password", "invoice", "login", "delivery", "account", "order", "screen")


def rating_of(system: str, answer: str) -> int:
    """What the judge gives an answer under a system prompt."""
    if "refund" in answer.lower() and "refund" not in system.lower():
        return 5
    return max(1, min(5, len(sentences(answer))))


class RefundJudge:
    """The responder; counts requests by kind."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __call__(self, request: dict) -> Any:
        system, user = request["messages"][0]["content"], request["messages"][-1]["content"]
        props = (request_schema(request) or {}).get("properties") or {}
        if "criteria" in props:  # the reflective rewrite
            with self._lock:
                self.calls["rewrite"] += 1
            found = blocks(user)
            words = found.get("Criterion", "").strip()
            cases = user[user.find("Case 1:"):] if "Case 1:" in user else ""
            extra = f" {REFUND_RULE}" if "refund" in cases.lower() else ""
            return {"criteria": words + extra, "steps": ["Read the question.", "Check the reply solves it."]}
        with self._lock:
            self.calls["rate"] += 1
        found = blocks(user)
        answer = found.get("Answer") or found.get("Text", "")  # a custom criterion's block, or coherence's
        return {"reason": "scripted", "score": rating_of(system, answer)}


def answer(rng: random.Random, topic: str, refund: bool) -> str:
    if refund:
        return f"We will refund the {topic} charge right away."
    count = rng.randint(1, 5)
    said = [f"About your {topic}: here is what to do.", "Open the settings page.", "Choose the item named there.",
            "Confirm the change.", "You will get an email when it is done."]
    return " ".join(said[:count])


def rows(n: int = 200, refund_share: float = 0.25, seed: int = 7) -> list[Datum]:
    """``n`` support replies of one model, a ``refund_share`` of them offering a refund (one sentence)."""
    rng = random.Random(seed)
    made = []
    for i in range(n):
        topic = TOPICS[i % len(TOPICS)]
        refund = rng.random() < refund_share
        made.append(Datum(f"t{i:03d}", "bot", f"My {topic} is broken, what now?", answer(rng, topic, refund)))
    return made


def people(row: Datum) -> int:
    """What the people rate a reply: its sentence count; a refund reply 1 (it solves nothing)."""
    text = row.prediction or ""
    return 1 if "refund" in text.lower() else max(1, min(5, len(sentences(text))))


def agreeing(row: Datum, rng: random.Random, noise: float = 0.1) -> int:
    """Labels that already agree with the judge as it is, with a little noise: a ``noise`` share moved by one."""
    value = rating_of("", row.prediction or "")
    if rng.random() < noise:
        value = value + 1 if value == 1 else value - 1 if value == 5 else value + rng.choice((-1, 1))
    return value


def label_rows(run_rows: list[Datum], rule, score: str = "helpfulness", annotator: str = "ana",
               seed: int = 3) -> list[tuple]:
    """Label tuples in the store's order (datum, model, score, annotator, value, note, sampling, probability)."""
    rng = random.Random(seed)
    out = []
    for row in run_rows:
        value = rule(row) if rule is people else rule(row, rng)
        note = "only a refund, the problem stays" if re.search("refund", row.prediction or "", re.I) and value == 1 \
            else None
        out.append((row.datum_id, row.model, score, annotator, float(value), note, "random", None))
    return out
