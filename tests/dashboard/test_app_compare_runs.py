"""Compare across runs through AppTest: two pickers (baseline run:model, candidate run:model) give the numbers of
compare_across, the function the CLI's cross-run form calls; different settings are refused in words naming the
difference until 'Allow different judges' is ticked; the form is in the address."""

from __future__ import annotations

import numpy as np
import pandas as pd
from app_helpers import all_text, frame_with, no_exception, page, store

from textgen_core.catalog import store_version
from textgen_core.compare.across_runs import Side, compare_across
from textgen_core.evaluate import evaluate
from textgen_core.model import Dataset, Datum
from textgen_dashboard import data
from textgen_dashboard.compare_runs import ACROSS, ALLOW, BASE_MODEL, BASE_RUN, CAND_MODEL, CAND_RUN


def answers(rng: np.random.Generator, models: dict[str, float], edited: int = 0) -> Dataset:
    rows = [Datum(f"d{i}", model, f"q{i}{'?' if i < edited else ''}",
                  "the cat sat on the mat" if rng.random() < chance else "a dog ran in the park",
                  ("the cat sat on the mat",))
            for i in range(60) for model, chance in models.items()]
    return Dataset("answers", rows)


def fill() -> None:
    db, rng = store(), np.random.default_rng(8)
    first = store_version(db, answers(rng, {"a": 0.6, "b": 0.75}), "answers")
    evaluate(db, first.dataset_id, ["exact_match", "rouge"], workers=1)  # run 1
    second = store_version(db, answers(rng, {"a": 0.6, "d": 0.8}, edited=5), "answers")
    evaluate(db, second.dataset_id, ["exact_match", "rouge"], workers=1)  # run 2, version 2
    evaluate(db, first.dataset_id, ["rouge"], params={"rouge": {"use_stemmer": True}}, workers=1)  # run 3
    db.run_names.label_run(2, name="week 2", add_tags=["candidate"])
    data.refresh()


def across(at, base: tuple[int, str], cand: tuple[int, str]):
    at.radio(key=ACROSS).set_value(True).run()
    at.selectbox(key=BASE_RUN).set_value(base[0]).run()
    at.selectbox(key=BASE_MODEL).set_value(base[1])
    at.selectbox(key=CAND_RUN).set_value(cand[0]).run()
    at.selectbox(key=CAND_MODEL).set_value(cand[1]).run()
    no_exception(at)
    return at


def test_two_pickers_give_the_numbers_of_the_cli_function(app_db) -> None:
    fill()
    at = across(page("views/compare.py").run(), (1, "a"), (2, "d"))
    assert at.selectbox(key=CAND_RUN).format_func(2).startswith("#2 · week 2 · [candidate] · answers")
    shown = frame_with(at, "left out")
    expected = compare_across(store(), Side(1, "a"), Side(2, "d"))  # the CLI's defaults
    assert shown["score"].tolist() == expected["score"].tolist()
    for column, source in (("n", "n"), ("baseline mean", "baseline_mean"), ("candidate mean", "candidate_mean"),
                           ("delta", "delta"), ("p (Holm)", "p_adjusted")):
        pd.testing.assert_series_equal(shown[column].astype(float), expected[source].astype(float), check_names=False,
                                       check_exact=True)
    assert (shown["left out"] == 5).all()  # five questions reworded in version 2
    assert "5 datum(s) left out" in all_text(at) and "difference" not in shown.columns
    params = dict(at.query_params)
    assert {k: params.get(k) for k in ("across", "base_run", "base_model", "cand_run", "cand_model")} == {
        "across": "1", "base_run": "1", "base_model": "a", "cand_run": "2", "cand_model": "d"}


def test_different_settings_are_refused_in_words_until_allowed(app_db) -> None:
    fill()
    at = across(page("views/compare.py").run(), (1, "a"), (3, "a"))
    errors = " ".join(e.value for e in at.error).replace("\\", "")
    assert "not comparable" in errors and "Allow different judges" in errors
    assert "- rouge1: use_stemmer: False -> True" in errors  # each score's difference, in words
    assert not [f for f in at.dataframe if "left out" in f.value.columns]  # no numbers shown
    at.checkbox(key=ALLOW).check().run()
    no_exception(at)
    shown = frame_with(at, "difference")
    assert shown["difference"].str.contains("use_stemmer: False -> True").all()
    expected = compare_across(store(), Side(1, "a"), Side(3, "a"), allow_different=True)
    assert shown["delta"].astype(float).tolist() == expected["delta"].tolist()
    assert "Compared despite different settings" in all_text(at)


def test_the_same_side_twice_is_refused_and_the_address_reopens_the_form(app_db) -> None:
    fill()
    at = page("views/compare.py")
    for key, value in (("across", "1"), ("base_run", "2"), ("base_model", "a"), ("cand_run", "2"),
                       ("cand_model", "a")):
        at.query_params[key] = value
    at.run()
    no_exception(at)
    assert at.radio(key=ACROSS).value is True and at.selectbox(key=BASE_RUN).value == 2
    assert "pick two different ones" in all_text(at)
    at.selectbox(key=CAND_MODEL).set_value("d").run()
    assert frame_with(at, "left out")["left out"].eq(0).all()  # one version: nothing left out
