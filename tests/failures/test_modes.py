"""FailureModes without the sentence model: rates by slice, new and gone modes, examples, the lowest lexical cells."""

from __future__ import annotations

import pandas as pd
import pytest

from textgen_core.errors import ParameterError
from textgen_core.failures import FailureModes, FailureRule, failing_judgements
from textgen_core.model import Dataset, Datum
from textgen_core.store import Store

MEMBER_COLUMNS = ["mode", "datum_id", "model", "unit", "step", "item_index", "text"]


def _modes(members: list[tuple], n: int = 20) -> FailureModes:
    cells = pd.DataFrame([(f"d{i:02d}", m, "qa_grade") for i in range(n) for m in ("a", "b")],
                         columns=["datum_id", "model", "unit"])
    modes = pd.DataFrame([(0, "refund", ["refund"], 0), (1, "date", ["date"], 0)],
                         columns=["mode", "name", "words", "size"])
    return FailureModes(1, modes, pd.DataFrame(members, columns=MEMBER_COLUMNS), cells)


def test_new_and_gone_modes_are_called_out() -> None:
    members = [(0, f"d{i:02d}", "b", "qa_grade", "qa_grade", 0, "refund") for i in range(6)]
    members += [(1, "d00", "a", "qa_grade", "qa_grade", 0, "date")]
    table = _modes(members).compare("a", ["b"])
    assert table.set_index("mode")["change"].to_dict() == {0: "new in candidate", 1: "gone in candidate"}
    refund = table.set_index("mode").loc[0]
    assert refund["baseline_rate"] == 0 and refund["candidate_rate"] == pytest.approx(6 / 20)
    assert refund["p"] == pytest.approx(2 * 0.5 ** 6)  # six discordant pairs, all one way
    assert refund["p_holm"] == pytest.approx(min(1.0, 2 * refund["p"]))


def test_a_cell_with_two_failures_in_one_mode_counts_once() -> None:
    members = [(0, "d00", "a", "qa_grade", "qa_grade", i, "refund") for i in range(3)]
    rates = _modes(members).rates()
    row = rates[(rates["mode"] == 0) & (rates["model"] == "a")].iloc[0]
    assert row["failing"] == 1 and row["cells"] == 20 and row["rate"] == pytest.approx(0.05)


def test_rates_by_slice_keep_a_missing_value_as_its_own_slice() -> None:
    members = [(0, "d00", "a", "qa_grade", "qa_grade", 0, "x"), (0, "d01", "a", "qa_grade", "qa_grade", 0, "y")]
    by = pd.DataFrame([(f"d{i:02d}", m, "tax" if i < 10 else None) for i in range(20) for m in ("a", "b")],
                      columns=["datum_id", "model", "slice"])
    rates = _modes(members).rates(by=by)
    tax = rates[(rates["mode"] == 0) & (rates["slice"] == "tax") & (rates["model"] == "a")].iloc[0]
    assert tax["failing"] == 2 and tax["cells"] == 10
    assert set(rates["slice"]) == {"tax", "(missing)"}


def test_examples_take_turns_between_models() -> None:
    members = [(0, f"d{i:02d}", m, "qa_grade", "qa_grade", 0, f"{m}{i}") for i in range(5) for m in ("a", "b")]
    ex = _modes(members).examples(0, 4)
    assert ex["model"].tolist() == ["a", "b", "a", "b"] and ex["datum_id"].tolist() == ["d00", "d00", "d01", "d01"]


def test_unknown_model_is_one_clear_error() -> None:
    with pytest.raises(ParameterError, match="model\\(s\\) zed not in the run's scored cells; models: a, b"):
        _modes([]).compare("a", ["zed"])


def test_lowest_lexical_cells_follow_the_direction_and_skip_unscored(tmp_path) -> None:
    store = Store(tmp_path / "f.duckdb")
    rows = [Datum(f"d{i}", "m", prediction=f"prediction {i}", references=("r",)) for i in range(10)]
    run = store.create_run(store.save_dataset(Dataset("d", rows)), ["exact_match"], {}, {}, ["m"])
    store.write_cells(run, [(f"d{i}", "m", "exact_match", "exact_match", float(i), None, None) for i in range(9)]
                      + [("d9", "m", "exact_match", "exact_match", None, None, "empty")])
    store.set_run_status(run, "finished")
    found, units = failing_judgements(store, run, ["exact_match"], FailureRule(lowest=0.2))
    assert units == ["exact_match"] and sorted(found["datum_id"]) == ["d0", "d1"]
    assert found["text"].tolist() == ["prediction 0", "prediction 1"]
