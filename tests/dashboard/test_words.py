"""Names and numbers written for people: judge steps, identifiers as labels, numbers without float noise."""

from __future__ import annotations

import pytest

from textgen_dashboard.words import header_words, name_words, number_text, step_words


@pytest.mark.parametrize(("step", "words"), [
    ("statements.reference.ref1", "statements · reference 1"),
    ("verdicts.context.ctx2", "verdicts · context 2"),
    ("claims", "claims"),
    ("custom.support_tone", "custom · support tone"),
    ("statements.prediction", "statements · prediction"),
])
def test_step_names_read_as_words(step, words):
    assert step_words(step) == words


@pytest.mark.parametrize(("name", "words"), [
    ("rouge_types", "ROUGE types"), ("n_labels", "Labels"), ("lam_planned", "λ planned"), ("ci_low", "95% CI low"),
    ("labels_needed", "Labels needed"), ("datum_id", "Datum"), ("baseline_mean", "Baseline mean"),
    ("n_rows", "Rows"), ("n", "n"), ("judge_model", "Judge model"), ("max_chars", "Max chars"),
    ("95% CI low", "95% CI low"), ("judge only", "judge only"), ("custom.support_tone", "custom.support_tone"),
    ("model-a", "model-a"), ("", ""),
])
def test_identifiers_read_as_labels(name, words):
    assert name_words(name) == words


def test_table_headers_keep_the_columns_that_hold_data():
    """A pivot's columns are models or scores: their names are data, never rewritten."""
    labels = header_words(["score", "qa_grade", "model_a", "n_scored", "95% CI low", "datum_id", "roc_auc"],
                          keep=["qa_grade", "model_a"])
    assert labels.pop("datum_id") == "datum" and labels.pop("roc_auc") == "ROC AUC"
    assert labels == {"n_scored": "scored"}  # headers start lower case, as the hand-written ones do


@pytest.mark.parametrize(("value", "text"), [
    (8.68e-234, "0.0000"), (-1e-300, "0.0000"), (0.7999999999999999334, "0.8000"), (1234567.0, "1,234,567"),
    (3, "3"), (0.5, "0.5000"), (float("nan"), ""), (None, ""), (float("inf"), "∞"), ("text", "text"),
])
def test_numbers_are_written_without_float_noise(value, text):
    assert number_text(value) == text
