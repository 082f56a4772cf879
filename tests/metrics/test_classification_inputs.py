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


@pytest.mark.parametrize("suffix", ["jsonl", "parquet"])
def test_numeric_labels_in_json_lines_or_parquet_are_text_labels(tmp_path, suffix: str, capsys) -> None:
    """Issue 34, point 13: classes written as numbers (0, 1, 2) refused the whole file."""
    import json

    import pandas as pd

    from textgen_core.cli.main import main
    from textgen_core.store import Store

    gold, predicted = [1, 1, 2, 0, 2.0], [1, 0, 2, 0, None]
    path = tmp_path / f"labels.{suffix}"
    frame = pd.DataFrame({"id": ["a", "b", "c", "d", "e"], "model": "m", "prediction": predicted, "reference": gold})
    if suffix == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in frame.to_dict("records")).replace("NaN", "null"))
    else:
        frame.to_parquet(path)  # the predictions are a float column with a gap: 1.0 is the label "1"
    db = tmp_path / "c.duckdb"
    assert main(["--db", str(db), "run", str(path), "--metrics", "classification"]) == 0, capsys.readouterr().err
    cells = Store(db).scores(1).set_index("datum_id")
    assert cells.loc[["a", "b", "c", "d"], "value"].tolist() == [1.0, 0.0, 1.0, 1.0]
    assert json.loads(cells.loc["a", "details"])["label"] == "1" and pd.isna(cells.loc["e", "value"])
    out = capsys.readouterr().out
    assert "accuracy" in out


def test_a_true_or_false_label_is_still_refused_naming_the_cell(tmp_path) -> None:
    from textgen_core.datasets import load_dataset
    from textgen_core.errors import InputError

    path = tmp_path / "bool.jsonl"
    path.write_text('{"id": "a", "model": "m", "prediction": true, "reference": "x"}\n')
    with pytest.raises(InputError, match="true/false|a boolean") as caught:
        load_dataset(path)
    assert caught.value.row == 1 and caught.value.column == "prediction"


def test_classification_from_any_two_columns_of_a_stored_dataset(tmp_path, capsys) -> None:
    """Issue 28: the labels a file already has (predicted_category, category) are classified without a second
    upload; a row with no value in a label column is unscored with the reason; a misspelt column is refused."""
    import pandas as pd

    from textgen_core.cli.main import main
    from textgen_core.compare.classification import classification_reports
    from textgen_core.store import Store

    data = tmp_path / "support.csv"
    pd.DataFrame({"id": ["t1", "t2", "t3", "t4", "t5"], "model": "m",
                  "query": ["Refund?", "Password?", "Where is it?", "Invoice?", "Login?"],
                  "prediction": ["We refunded you.", "Reset it here.", "It ships today.", "Sent.", "Try again."],
                  "reference": ["Refund issued.", "Use reset.", "Shipped.", "Invoice sent.", "Reset it."],
                  "category": ["billing", "account", "shipping", "billing", "account"],
                  "predicted_category": ["billing", "account", "billing", "billing", ""]}).to_csv(data, index=False)
    db = tmp_path / "s.duckdb"
    assert main(["--db", str(db), "run", str(data), "--metrics", "exact_match", "--name", "support"]) == 0
    capsys.readouterr()
    args = ["--db", str(db), "run", "support", "--metrics", "classification", "--param",
            "classification.prediction_column=predicted_category", "--param", "classification.reference_column=category"]
    assert main(args) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    store = Store(db)
    assert len(store.list_datasets()) == 1  # the stored dataset, not a re-upload
    cells = store.scores(2).set_index("datum_id")
    assert cells.loc[["t1", "t2", "t3", "t4"], "value"].tolist() == [1.0, 1.0, 0.0, 1.0]
    assert pd.isna(cells.loc["t5", "value"])
    assert cells.loc["t5", "reason"] in ("no value in the prediction column 'predicted_category'",
                                         "the predicted label is empty")
    report = classification_reports(store, 2)["m"]
    assert report["confusion"]["labels"] == ["billing", "account", "shipping"] and report["averages"]["accuracy"] == 0.75
    assert "shipping" in out and "billing" in out
    bad = [*args[:-1], "classification.reference_column=categroy"]
    assert main(bad) == 2 and "categroy" in capsys.readouterr().err
