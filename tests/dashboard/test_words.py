"""Names and numbers written for people: judge steps, identifiers as labels, numbers without float noise."""

from __future__ import annotations

import pytest

from textgen_dashboard.words import name_words, number_text, step_words


@pytest.mark.parametrize(("step", "words"), [
    ("statements.reference.ref1", "statements · reference 1"),
    ("verdicts.context.ctx2", "verdicts · context 2"),
    ("claims", "claims"),
    ("custom.support_tone", "custom · support tone"),
    ("statements.prediction", "statements · prediction"),
])
def test_step_names_read_as_words(step, words):
    assert step_words(step) == words


@pytest.mark.parametrize(("name", "words"), [("rouge_types", "Rouge types"), ("n_labels", "Number of labels"),
                                             ("lam_planned", "Lambda planned"), ("ci_low", "Interval low")])
def test_identifiers_read_as_labels(name, words):
    assert name_words(name) == words


@pytest.mark.parametrize(("value", "text"), [
    (8.68e-234, "0.0000"), (-1e-300, "0.0000"), (0.7999999999999999334, "0.8000"), (1234567.0, "1,234,567"),
    (3, "3"), (0.5, "0.5000"), (float("nan"), ""), (None, ""), (float("inf"), "∞"), ("text", "text"),
])
def test_numbers_are_written_without_float_noise(value, text):
    assert number_text(value) == text
