"""Issue 34, point 6: label inputs that say nothing or say two things are unscored with the reason, never wrong."""

from __future__ import annotations

import pytest

from textgen_core.metrics.classification.spec import SPEC
from textgen_core.model import Datum


def _cell(prediction: str, gold: str = "pos", **params):
    row = Datum("d1", "m", None, prediction, (gold,), (), {})
    return SPEC.score([row], params)[0]["label_correct"]


@pytest.mark.parametrize("prediction, key", [('{"pos": 0.9, "pos": 0.1, "neg": 0.5}', "pos"),
                                             ('{"neg": 0.2, "pos": 0.1, "neg": 0.5}', "neg"),
                                             ('{"pos": 0.1, "pos": 0.1}', "pos")])
def test_a_duplicated_key_in_a_score_object_is_unscored_not_last_wins(prediction: str, key: str) -> None:
    cell = _cell(prediction)
    assert cell.value is None and cell.reason == (f"label {key!r} has two scores in the prediction's JSON object "
                                                  "(a duplicated key is ambiguous)")
    assert _cell('{"pos": 0.9, "neg": 0.5}').value == 1.0  # distinct keys still score


@pytest.mark.parametrize("prediction", ["   ", "\t\n", "\u200b", " \u2060\ufeff "])
def test_a_whitespace_or_invisible_predicted_label_is_empty_not_a_wrong_label(prediction: str) -> None:
    cell = _cell(prediction)
    assert cell.value is None and cell.reason == "the predicted label is empty"
    assert _cell(prediction, strip_whitespace=True).reason == "the predicted label is empty"


def test_a_whitespace_gold_label_is_empty_and_a_blank_score_key_is_refused() -> None:
    assert _cell("pos", gold="  ").reason == "the gold label is empty"
    assert _cell('{"  ": 0.9, "pos": 0.1}').reason == "label '  ' is empty"
    assert _cell(" pos").value == 0.0  # a label with text around it is still a label (no normalisation asked)
