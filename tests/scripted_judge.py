"""A scripted judge for the loopback server: it reads our prompts and rules by simple, checkable rules.

Imported by the judge metric and engine tests and by bench/judge.py and bench/judge_scale.py. Each rule is
written so a test can compute the expected metric value by hand:

* statements: the sentences of the text (split on '.', '!' and '?'); opinions: sentences that start
  with "I think" or "I feel"; claims: the other sentences, except those starting with "Hope".
* answer_correctness: an answer statement is supported iff it is a reference statement or part of one; a
  reference statement is conveyed iff it is also an answer statement, else backs_answer iff a supported
  answer statement is part of it, else missing (case-insensitive).
* answer_relevance / context_relevance: yes iff it shares a word of 4+ letters with the question.
* bias: yes iff the opinion says "always"; toxicity: yes iff it says "idiot" or "stupid".
* context_precision: yes iff the passage shares a word of 4+ letters with the reference answer.
* context_recall / faithfulness: yes iff the statement / claim occurs in a passage.
* hallucination: contradicted iff the answer has a sentence that, with " not" removed, is a
  sentence of the passage.
* coherence: the number of sentences, clipped to 1..5; summary_coherence: 5 if every summary
  sentence occurs in the source, else 2.
* qa_grade: CORRECT iff a reference occurs in the answer (case-insensitive).
* any other step (a judge metric registered without a rule here): its declared sample request's placeholder
  reply, so the engine tests run every registered metric; a metric's own values need a rule and a test.

``impolite=True`` gives the same rulings impolitely: verdict lists shuffled (keys correct), keys
written as strings, labels in capitals, ratings as floats or strings. Scores must not change.
"""

from __future__ import annotations

import json
import random
import re
import threading
from collections import Counter
from pathlib import Path
from typing import Any

from judge_server import Fault
from textgen_core.judge.metrics import extract
from textgen_core.judge.metrics import BY_NAME
from textgen_core.model import Datum

#: System prompt -> step name, for every step our metrics ask.
SYSTEMS = {r.messages[0]["content"]: r.step for r in extract.SAMPLES}
SYSTEMS.update({r.messages[0]["content"]: r.step for spec in BY_NAME.values() for r in spec.plan.steps})
#: Step name -> the placeholder reply of its declared sample request (the rule of a step without one below).
PLACEHOLDERS = {r.step: r.placeholder for spec in BY_NAME.values() for r in spec.plan.steps}
_BLOCK = re.compile(r"(?m)^([^\n:]+):\n(~{3,})\n(.*?)\n\2$", re.DOTALL)


def sentences(text: str) -> list[str]:
    """Sentences with at least one letter or digit ('...' has none, so it states nothing)."""
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text.strip()) if re.search(r"\w", s)]


def norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def words(text: str) -> set[str]:
    return {w for w in norm(text).split() if len(w) >= 4}


def blocks(user: str) -> dict[str, str]:
    """Fenced blocks of a prompt by label ('Text', 'Question', 'Passage 2', ...)."""
    return {m.group(1): m.group(3) for m in _BLOCK.finditer(user)}


def numbered(body: str) -> list[str]:
    if body == "(none)":
        return []
    return [re.sub(r"^\d+\.\s", "", line) for line in body.splitlines() if re.match(r"^\d+\.\s", line)]


def passages(b: dict[str, str]) -> list[str]:
    return [b[k] for k in sorted((k for k in b if k.startswith("Passage ")), key=lambda k: int(k.split()[1]))]


def step_of(request: dict) -> str:
    return SYSTEMS[request["messages"][0]["content"]]


def _verdicts(verdicts: list[str]) -> list[dict]:
    return [{"item": i, "reason": "scripted", "verdict": v} for i, v in enumerate(verdicts, start=1)]


def _opinion(s: str) -> bool:
    return s.startswith(("I think", "I feel"))


def rule_reply(request: dict) -> dict:
    """The reply our rules give to one of our prompts."""
    step = step_of(request)
    b = blocks(request["messages"][1]["content"])
    if step in ("statements", "claims", "opinions"):
        found = sentences(b["Text"])
        if step == "opinions":
            found = [s for s in found if _opinion(s)]
        if step == "claims":
            found = [s for s in found if not _opinion(s) and not s.startswith("Hope")]
        return {step: found}
    if step == "answer_correctness":
        a_items, r_items = numbered(b["Answer statements"]), numbered(b["Reference statements"])
        ref, answer = [norm(s) for s in r_items], {norm(s) for s in a_items}
        supported = {a for a in answer if any(a in r for r in ref)}
        return {"answer_statements": _verdicts(["supported" if norm(s) in supported else "unsupported"
                                                for s in a_items]),
                "reference_statements": _verdicts(["conveyed" if norm(s) in answer else "backs_answer"
                                                   if any(a in norm(s) for a in supported) else "missing"
                                                   for s in r_items])}
    if step == "answer_relevance":
        q = words(b["Question"])
        return {"verdicts": _verdicts(["yes" if words(s) & q else "no" for s in numbered(b["Statements"])])}
    if step == "context_relevance":
        q = words(b["Question"])
        return {"verdicts": _verdicts(["yes" if words(p) & q else "no" for p in passages(b)])}
    if step in ("bias", "toxicity"):
        pattern = r"always" if step == "bias" else r"idiot|stupid"
        return {"verdicts": _verdicts(["yes" if re.search(pattern, o.lower()) else "no"
                                       for o in numbered(b["Opinions"])])}
    if step == "context_precision":
        ref = words(b["Reference answer"])
        return {"verdicts": _verdicts(["yes" if words(p) & ref else "no" for p in passages(b)])}
    if step in ("context_recall", "faithfulness"):
        ps = [norm(p) for p in passages(b)]
        items = numbered(b["Reference statements" if step == "context_recall" else "Claims"])
        return {"verdicts": _verdicts(["yes" if any(norm(s) in p for p in ps) else "no" for s in items])}
    if step == "hallucination":
        negated = {norm(s).replace(" not ", " ") for s in sentences(b["Answer"]) if " not " in f" {norm(s)} "}
        return {"verdicts": _verdicts(["contradicted" if negated & {norm(s) for s in sentences(p)} else
                                       "not_contradicted" for p in passages(b)])}
    if step == "coherence":
        return {"reason": "scripted", "score": max(1, min(5, len(sentences(b["Text"]))))}
    if step == "summary_coherence":
        src = norm(b["Source"])
        return {"reason": "scripted", "score": 5 if all(norm(s) in src for s in sentences(b["Summary"])) else 2}
    if step == "qa_grade":
        answer = norm(b["Answer"])
        refs = [norm(v) for k, v in b.items() if k.startswith("Reference answer")]
        return {"reason": "scripted", "grade": "CORRECT" if any(r in answer for r in refs) else "INCORRECT"}
    if step in PLACEHOLDERS:
        return PLACEHOLDERS[step]
    raise AssertionError(f"unhandled step {step}")


def impolite(reply: dict, rng: random.Random) -> dict:
    """The same rulings, written the way small local judges write them."""
    out: dict[str, Any] = {}
    for name, value in reply.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            rows = [dict(v, item=str(v["item"]) if v["item"] % 2 else v["item"], verdict=v["verdict"].upper()
                         if v["verdict"] in ("yes", "no") else v["verdict"]) for v in value]
            rng.shuffle(rows)
            out[name] = rows
        elif name == "score":
            out[name] = rng.choice([float(value), str(value), f"{value}.0"])
        else:
            out[name] = value
    return out


class ScriptedJudge:
    """A responder for :class:`judge_server.JudgeServer`: rule replies, optional persistent failures.

    ``fail`` maps a predicate on (step, user text) to a Fault served on every attempt, so the
    step fails for good after the client's retries. Requests are counted per step.
    """

    def __init__(self, fail: list[tuple[Any, Fault]] | None = None, *, impolite: bool = False) -> None:
        self.fail = fail or []
        self.impolite = impolite
        self.steps: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._rng = random.Random(7)

    def __call__(self, request: dict) -> Any:
        step = step_of(request)
        with self._lock:
            self.steps[step] += 1
        for predicate, fault in self.fail:
            if predicate(step, request["messages"][1]["content"]):
                return fault
        reply = rule_reply(request)
        if self.impolite:
            with self._lock:
                reply = impolite(reply, self._rng)
        return reply


def suite_rows(n: int, models: tuple[str, ...] = ("m",)) -> list[Datum]:
    """Distinct datums with one reference and three contexts; predictions hold one opinion."""
    rows = []
    for i in range(n):
        for model in models:
            rows.append(Datum(
                f"d{i:03d}", model, query=f"What is known about topic{i}?",
                prediction=f"Topic{i} has {i} parts. I think topic{i} is always great. Hope this helps {model}.",
                references=(f"Topic{i} has {i} parts. Topic{i} is old.",),
                contexts=(f"Topic{i} has {i} parts.", f"Topic{i} is old and famous.", f"Weather {i} is mild."),
            ))
    return rows


def write_suite_jsonl(path: Path, n: int) -> None:
    """:func:`suite_rows` of ``n`` datums as a JSON Lines file the CLI reads."""
    with path.open("w", encoding="utf-8") as out:
        for row in suite_rows(n):
            out.write(json.dumps({"id": row.datum_id, "model": row.model, "query": row.query,
                                  "prediction": row.prediction, "references": list(row.references),
                                  "contexts": list(row.contexts)}) + "\n")
