"""Candidates made from training cells: which disagreements become examples, the verdicts they carry, a rewrite
that is not a usable criterion, and an analyst's edit that changes what the labels rate."""

from __future__ import annotations

import pytest

from textgen_core.align.candidates import (TrainingCell, both, disagreements, few_shot, from_rewrite,
                                           rewrite_request, verdict_of, yours)
from textgen_core.errors import ParameterError
from textgen_core.judge.metrics.criteria import criterion
from textgen_core.model import Datum

RATING = criterion({"name": "help", "criteria": "Helpful?", "inputs": ["prediction"],
                    "output": {"type": "rating", "min": 1, "max": 5}})
YES_NO = criterion({"name": "safe", "criteria": "Safe?", "inputs": ["query", "prediction"],
                    "output": {"type": "yes_no"}})
LABELS = criterion({"name": "kind", "criteria": "Kind?", "output": {"type": "labels", "labels": ["good", "meh", "bad"],
                                                                    "pass": ["good"]}})


def _cell(i: int, people: float, judge: float | None, note: str = "") -> TrainingCell:
    return TrainingCell(Datum(f"d{i:02d}", "m", f"q{i}", f"answer {i}"), people, judge, note)


def test_few_shot_takes_the_largest_disagreements_first_and_at_most_twelve():
    cells = [_cell(i, 1.0, 1.0 + (i % 5), f"note {i}") for i in range(40)] + [_cell(99, 1.0, None)]
    found = disagreements(RATING, cells)
    assert [abs(c.judge - c.people) for c in found] == sorted((abs(c.judge - c.people) for c in found), reverse=True)
    assert all(c.judge != c.people and c.judge is not None for c in found)
    shots = few_shot(RATING, cells)
    assert len(shots.criterion.examples) == 12
    first = shots.criterion.examples[0]
    assert dict(first.inputs) == {"prediction": "answer 4"} and first.verdict == 1 and first.note == "note 4"
    assert few_shot(RATING, [_cell(1, 3.0, 3.0)]) is None  # no disagreement, no candidate


def test_verdicts_of_yes_no_and_label_scores():
    assert verdict_of(YES_NO, 1.0) == "yes" and verdict_of(YES_NO, 0.0) == "no"
    assert verdict_of(LABELS, 1.0) == "good" and verdict_of(LABELS, 0.0) == "meh"
    shots = few_shot(YES_NO, [_cell(1, 0.0, 1.0, "unsafe advice")])
    assert shots.criterion.examples[0].verdict == "no"
    assert dict(shots.criterion.examples[0].inputs) == {"query": "q1", "prediction": "answer 1"}


def test_the_rewrite_request_shows_training_cases_and_its_reply_becomes_a_candidate():
    cells = [_cell(1, 1.0, 5.0, "only a refund")]
    req = rewrite_request(RATING, cells)
    user = req.messages[1]["content"]
    assert "Helpful?" in user and "answer 1" in user and "Judge's score: 5; people's score: 1" in user
    assert "only a refund" in user
    made = from_rewrite(RATING, {"criteria": "Helpful? A refund alone is not.", "steps": ["Read it."]}, "p")
    assert made.criterion.criteria.endswith("A refund alone is not.") and made.criterion.output == RATING.output
    combined = both(made, few_shot(RATING, cells))
    assert combined.kind == "both" and combined.criterion.examples and "refund alone" in combined.criterion.criteria
    with pytest.raises(ParameterError, match="the judge's rewrite is not a usable criterion"):
        from_rewrite(RATING, {"criteria": "   ", "steps": []}, "p")
    with pytest.raises(ParameterError, match="not a usable criterion"):
        from_rewrite(RATING, ["not", "an", "object"], "p")


def test_your_edit_must_keep_name_inputs_and_output():
    mine = yours(RATING, RATING.as_dict() | {"criteria": "Helpful, in full?"}, "mine.toml")
    assert mine.kind == "yours (mine.toml)" and mine.criterion.criteria == "Helpful, in full?"
    for change, key in (({"output": {"type": "rating", "min": 1, "max": 3}}, "output"),
                        ({"inputs": ["query", "prediction"]}, "inputs"), ({"name": "other"}, "name")):
        with pytest.raises(ParameterError, match=f"candidate mine.toml: key '{key}' must stay"):
            yours(RATING, RATING.as_dict() | change, "mine.toml")
