"""The empty-prediction count of score_counts: the fast guard agrees with trim() on every code point."""

from __future__ import annotations

import duckdb

from textgen_core.model import Dataset, Datum
from textgen_core.store import Store
from textgen_core.store.score_reads import BLANK_PREDICTION


def test_the_guard_never_skips_a_character_trim_removes() -> None:
    con = duckdb.connect()
    wrong = con.execute(
        "SELECT count(*) FROM (SELECT chr(i::INTEGER) AS c FROM range(1, 1114112) t(i) WHERE i < 55296 OR i > 57343) "
        f"d(prediction) WHERE ({BLANK_PREDICTION.replace('d.prediction', 'd.prediction || d.prediction')}) "
        "IS DISTINCT FROM (trim(d.prediction || d.prediction) = '')").fetchone()[0]
    assert wrong == 0


def test_score_counts_counts_blank_predictions_as_trim_does(tmp_path) -> None:
    predictions = ["", " ", "\u00a0\u3000 ", "\t", " \n", "a", " a ", "\u2003x", "\u200b"]
    rows = [Datum(f"d{i}", "m", "q", p, ("r",), ()) for i, p in enumerate(predictions)]
    store = Store(tmp_path / "blank.duckdb")
    dataset_id = store.save_dataset(Dataset("blank", rows, source="test"))
    run_id = store.create_run(dataset_id, ["rouge"], {}, {}, ["m"])
    store.write_cells(run_id, [(r.datum_id, "m", "rouge", "rouge1", 0.5, None, None) for r in rows])
    counts = store.score_counts(run_id)
    # trim() removes spaces, no-break and ideographic spaces, not tabs, newlines or zero-width spaces.
    assert counts["n_empty"].tolist() == [3]
    store.close()
