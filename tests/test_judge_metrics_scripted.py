"""A scripted judge for the loopback server: it reads our prompts and rules by simple, checkable rules.

Imported by the judge metric and engine tests (``from test_judge_metrics_scripted import ScriptedJudge``).
Each rule is written so a test can compute the expected metric value by hand:

* statements: the sentences of the text (split on '.', '!' and '?'); opinions: sentences that start
  with "I think" or "I feel".
* answer_correctness: an answer statement is supported iff it is also a reference sentence; a
  reference statement is present iff it is also an answer sentence (case-insensitive).
* answer_relevance / context_relevance: yes iff it shares a word of 4+ letters with the question.
* bias: yes iff the opinion says "always"; toxicity: yes iff it says "idiot" or "stupid".
* context_precision: yes iff the passage shares a word of 4+ letters with the reference answer.
* context_recall: yes iff the statement occurs in a passage; faithfulness: "implied" likewise,
  "not_a_claim" for sentences starting with "Hope", else "not_implied".
* hallucination: contradicted iff the answer has a sentence that, with " not" removed, is a
  sentence of the passage.
* coherence: the number of sentences, clipped to 1..5; summary_coherence: 5 if every summary
  sentence occurs in the source, else 2.
* qa_grade: CORRECT iff a reference occurs in the answer (case-insensitive).
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from typing import Any

from judge_server import Fault
from textgen_core.judge import prompts

_SYSTEMS = {
    prompts.prediction_units("x").messages[0]["content"]: "prediction_units",
    prompts.statements("x").messages[0]["content"]: "reference_statements",
    prompts.answer_correctness("x", ["a"], "r", ["b"]).messages[0]["content"]: "answer_correctness",
    prompts.answer_relevance("q", ["a"]).messages[0]["content"]: "answer_relevance",
    prompts.qa_grade("q", ["r"], "a").messages[0]["content"]: "qa_grade",
    prompts.opinion_verdicts(["o"]).messages[0]["content"]: "opinion_verdicts",
    prompts.context_precision("q", "r", ["c"]).messages[0]["content"]: "context_precision",
    prompts.context_recall(["c"], ["s"]).messages[0]["content"]: "context_recall",
    prompts.context_relevance("q", ["c"]).messages[0]["content"]: "context_relevance",
    prompts.faithfulness(["c"], ["s"]).messages[0]["content"]: "faithfulness",
    prompts.hallucination("p", ["c"]).messages[0]["content"]: "hallucination",
    prompts.coherence("p").messages[0]["content"]: "coherence",
    prompts.summary_coherence("s", "p").messages[0]["content"]: "summary_coherence",
}


def sentences(text: str) -> list[str]:
    """Sentences with at least one letter or digit ('...' has none, so it states nothing)."""
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text.strip()) if re.search(r"\w", s)]


def norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def words(text: str) -> set[str]:
    return {w for w in norm(text).split() if len(w) >= 4}


def blocks(user: str) -> dict[str, str]:
    return {m.group(1): m.group(2).strip() for m in re.finditer(r"<(\w+)>\n(.*?)\n</\1>", user, re.DOTALL)}


def numbered(body: str) -> list[str]:
    if body == "(none)":
        return []
    return [re.sub(r"^\d+\.\s", "", line) for line in body.splitlines() if re.match(r"^\d+\.\s", line)]


def passages(body: str) -> list[str]:
    return [p.strip() for p in re.split(r"(?m)^\[\d+\]\n", body) if p.strip()]


def step_of(request: dict) -> str:
    return _SYSTEMS[request["messages"][0]["content"]]


def _items(items: list[str], key: str, verdicts: list[str]) -> list[dict]:
    return [{key: item, "reason": "scripted", "verdict": v} for item, v in zip(items, verdicts)]


def _passage_items(count: int, verdicts: list[str]) -> list[dict]:
    return [{"passage": i + 1, "reason": "scripted", "verdict": v} for i, v in zip(range(count), verdicts)]


def rule_reply(request: dict) -> dict:
    """The reply our rules give to one of our prompts."""
    step = step_of(request)
    b = blocks(request["messages"][1]["content"])
    if step == "prediction_units":
        found = sentences(b["text"])
        return {"statements": found, "opinions": [s for s in found if s.startswith(("I think", "I feel"))]}
    if step == "reference_statements":
        return {"statements": sentences(b["text"])}
    if step == "answer_correctness":
        answer = {norm(s) for s in sentences(b["answer"])}
        ref = {norm(s) for s in sentences(b["reference"])}
        a_items, r_items = numbered(b["answer_statements"]), numbered(b["reference_statements"])
        return {"answer_statements": _items(a_items, "statement", ["supported" if norm(s) in ref else "unsupported" for s in a_items]),
                "reference_statements": _items(r_items, "statement", ["present" if norm(s) in answer else "missing" for s in r_items])}
    if step in ("answer_relevance", "context_relevance"):
        q = words(b["question"])
        if step == "answer_relevance":
            items = numbered(b["statements"])
            return {"verdicts": _items(items, "statement", ["yes" if words(s) & q else "no" for s in items])}
        ps = passages(b["passages"])
        return {"verdicts": _passage_items(len(ps), ["yes" if words(p) & q else "no" for p in ps])}
    if step == "opinion_verdicts":
        ops = numbered(b["opinions"])
        return {"verdicts": [{"opinion": o, "bias_reason": "scripted", "biased": "yes" if "always" in o.lower() else "no",
                              "toxicity_reason": "scripted",
                              "toxic": "yes" if re.search(r"idiot|stupid", o.lower()) else "no"} for o in ops]}
    if step == "context_precision":
        ps, ref = passages(b["passages"]), words(b["reference_answer"])
        return {"verdicts": _passage_items(len(ps), ["yes" if words(p) & ref else "no" for p in ps])}
    if step in ("context_recall", "faithfulness"):
        ps = [norm(p) for p in passages(b["passages"])]
        key = "reference_statements" if step == "context_recall" else "statements"
        items = numbered(b[key])
        verdicts = []
        for s in items:
            inside = any(norm(s) in p for p in ps)
            if step == "context_recall":
                verdicts.append("yes" if inside else "no")
            else:
                verdicts.append("implied" if inside else "not_a_claim" if s.startswith("Hope") else "not_implied")
        return {"verdicts": _items(items, "statement", verdicts)}
    if step == "hallucination":
        negated = {norm(s).replace(" not ", " ") for s in sentences(b["answer"]) if " not " in f" {norm(s)} "}
        ps = passages(b["passages"])
        return {"verdicts": _passage_items(len(ps), ["contradicted" if negated & {norm(s) for s in sentences(p)} else
                                                      "not_contradicted" for p in ps])}
    if step == "coherence":
        return {"reason": "scripted", "score": max(1, min(5, len(sentences(b["text"]))))}
    if step == "summary_coherence":
        src = norm(b["source"])
        return {"reason": "scripted", "score": 5 if all(norm(s) in src for s in sentences(b["summary"])) else 2}
    if step == "qa_grade":
        answer = norm(b["answer"])
        refs = [norm(v) for k, v in b.items() if k.startswith("reference_")]
        return {"reason": "scripted", "grade": "CORRECT" if any(r in answer for r in refs) else "INCORRECT"}
    raise AssertionError(f"unhandled step {step}")


class ScriptedJudge:
    """A responder for :class:`judge_server.JudgeServer`: rule replies, optional persistent failures.

    ``fail`` maps a predicate on (step, user text) to a Fault served on every attempt, so the
    step fails for good after the client's retries. Requests are counted per step.
    """

    def __init__(self, fail: list[tuple[Any, Fault]] | None = None) -> None:
        self.fail = fail or []
        self.steps: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __call__(self, request: dict) -> Any:
        step = step_of(request)
        with self._lock:
            self.steps[step] += 1
        for predicate, fault in self.fail:
            if predicate(step, request["messages"][1]["content"]):
                return fault
        return rule_reply(request)


def test_rules_read_our_prompts() -> None:
    request = {"messages": list(prompts.answer_correctness(
        "Paris is big. It rains.", ["Paris is big.", "It rains."], "Paris is big.", ["Paris is big."]).messages)}
    reply = rule_reply(request)
    assert [v["verdict"] for v in reply["answer_statements"]] == ["supported", "unsupported"]
    assert [v["verdict"] for v in reply["reference_statements"]] == ["present"]


def test_rules_read_passages() -> None:
    request = {"messages": list(prompts.hallucination("Water is not wet.", ["Water is wet.", "Fire is hot."]).messages)}
    assert [v["verdict"] for v in rule_reply(request)["verdicts"]] == ["contradicted", "not_contradicted"]
