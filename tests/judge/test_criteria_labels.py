"""Labels of a custom judge metric: case variants refused in the definition, replies matched after Unicode NFC."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from judge_server import JudgeServer
from textgen_core.api import score
from textgen_core.errors import ParameterError
from textgen_core.judge.metrics.criteria import criterion
from textgen_core.judge.settings import JudgeSettings
from textgen_core.llm.structured import normalize
from textgen_core.store import Store

DECOMPOSED = "Cafe\u0301"  # 'e' + combining acute accent
COMPOSED = "Caf\u00e9"


def definition(labels: list[str], passing: list[str]) -> dict:
    return {"name": "drink", "criteria": "Which drink does the reply recommend?",
            "output": {"type": "labels", "labels": labels, "pass": passing}}


@pytest.mark.parametrize("labels", [["Pass", "pass"], ["Fail", "PASS", "pass"], ["Stra\u00dfe", "STRASSE"]])
def test_labels_that_differ_only_in_case_are_refused(labels: list[str]) -> None:
    with pytest.raises(ParameterError, match="differ only in case") as raised:
        criterion(definition(labels, [labels[0]]), "rubric.toml")
    assert "output.labels" in str(raised.value) and "rubric.toml" in str(raised.value)


def test_labels_are_kept_in_nfc_and_a_reply_in_another_form_matches() -> None:
    made = criterion(definition([DECOMPOSED, "Th\u00e9"], [DECOMPOSED]))
    assert made.output.labels == (COMPOSED, "Th\u00e9") and made.output.passing == (COMPOSED,)
    assert made.output.value(DECOMPOSED) == 1.0 and made.output.value(COMPOSED) == 1.0
    assert made.output.value("Th\u00e9") == 0.0
    schema = {"type": "string", "enum": list(made.output.labels)}
    assert normalize(DECOMPOSED, schema) == COMPOSED
    assert normalize(" caf\u00c9 ", schema) == COMPOSED  # case and outer spaces too
    with pytest.raises(ParameterError, match="differ only in case"):  # the same label in two Unicode forms
        criterion(definition([DECOMPOSED, COMPOSED.upper()], [DECOMPOSED]))


def test_a_judge_replying_in_another_case_or_form_is_scored_by_its_meaning(tmp_path: Path) -> None:
    """The loopback judge answers 'PASS', ' pass', a decomposed 'Café', 'CAFÉ': each is the passing label (1)."""
    replies = {"Pass": {"a": "PASS", "b": "fail", "c": " pass"},
               COMPOSED: {"a": DECOMPOSED, "b": "FAIL", "c": COMPOSED.upper()}}

    def responder(request: dict) -> dict:
        text = " ".join(str(m["content"]) for m in request["messages"])
        said = replies["Pass"] if '"Pass"' in text else replies[COMPOSED]
        datum = next(k for k in said if f"answer {k}." in request["messages"][-1]["content"])
        return {"reason": "scripted", "label": said[datum]}

    frame = pd.DataFrame({"id": ["a", "b", "c"], "model": "m", "query": "q",
                          "prediction": ["answer a.", "answer b.", "answer c."]})
    with JudgeServer(responder=responder) as server:
        settings = JudgeSettings(base_url=server.url, model="judge", api_key="sk-test", timeout=5.0, retries=1)
        store = Store(tmp_path / "labels.duckdb")
        for name, first in (("verdict", "Pass"), ("drink", COMPOSED)):
            wide = score(frame, [definition([first, "Fail"], [first]) | {"name": name}], judge=settings, store=store)
            assert dict(zip(wide["datum_id"], wide[name])) == {"a": 1.0, "b": 0.0, "c": 1.0}, name
