"""Pairing in SQL: datum order, datum ids only the scores know, and what each model lacks."""

from __future__ import annotations

import numpy as np
import pytest

from textgen_core.compare import compare_models, paired_differences
from textgen_core.model import Dataset, Datum
from textgen_core.store import Store


def _store(tmp_path) -> tuple[Store, int]:
    rows = [Datum(d, m, "q", "p", ("r",), ()) for d in ("d3", "d1", "d2") for m in ("a", "b")]
    store = Store(tmp_path / "pairs.duckdb")
    run_id = store.create_run(store.save_dataset(Dataset("pairs", rows, source="test")), ["rouge"], {}, {},
                              ["a", "b"])
    cells = [("d3", "a", "rouge", "rouge1", 0.1), ("d3", "b", "rouge", "rouge1", 0.4),
             ("d1", "a", "rouge", "rouge1", 0.5), ("d1", "b", "rouge", "rouge1", 0.2),
             ("d2", "a", "rouge", "rouge1", None),  # unscored: d2 is missing for a
             ("d2", "b", "rouge", "rouge1", 0.9),
             # datum ids the dataset lacks: after the dataset's, by first score name, then id
             ("x9", "a", "rouge", "rouge1", 0.3), ("x9", "b", "rouge", "rouge1", 0.6),
             ("x1", "a", "rouge", "rougeL", 0.7), ("x1", "b", "rouge", "rougeL", 0.8),
             ("x5", "a", "rouge", "rouge1", 0.2), ("x5", "b", "rouge", "rouge1", 0.2)]
    store.write_cells(run_id, [(d, m, metric, score, v, None, None if v is not None else "judge failed")
                               for d, m, metric, score, v in cells])
    return store, run_id


def test_pairs_follow_dataset_order_then_the_scores_own_datum_ids(tmp_path) -> None:
    store, run_id = _store(tmp_path)
    pairs = paired_differences(store, run_id, "a", "b", "rouge1")
    # Only rouge1 counts: x1 (rougeL only) is not a datum of this pairing.
    assert pairs["datum_id"].tolist() == ["d3", "d1", "x5", "x9"]
    assert np.allclose(pairs["diff"], [0.3, -0.3, 0.0, 0.3])
    assert (pairs.attrs["missing_baseline"], pairs.attrs["missing_candidate"]) == (1, 0)
    store.close()


def test_comparison_counts_every_datum_any_score_knows(tmp_path) -> None:
    store, run_id = _store(tmp_path)
    frame = compare_models(store, run_id, "a", "b", resamples=200).set_index("score")
    assert frame.loc["rouge1", "n"] == 4 and frame.loc["rougeL", "n"] == 1
    # Over all scores the datums are d3 d1 d2 x1 x5 x9: rouge1 lacks x1 for both models, and d2 for a.
    assert frame.loc["rouge1", "delta"] == pytest.approx(0.075, abs=1e-12)
    assert frame.loc["rougeL", "delta"] == pytest.approx(0.1, abs=1e-12)
    store.close()


def test_models_the_run_does_not_declare_follow_in_order_of_first_score_and_datum(tmp_path) -> None:
    store, run_id = _store(tmp_path)
    store.write_cells(run_id, [("d1", "zeta", "rouge", "rouge1", 0.1, None, None),
                               ("d3", "alpha", "rouge", "rouge1", 0.2, None, None),
                               ("d2", "mid", "rouge", "rougeL", 0.3, None, None)])
    frame = compare_models(store, run_id, "a", resamples=50)
    # rouge1 before rougeL; within rouge1, zeta's first datum id d1 comes before alpha's d3.
    assert list(dict.fromkeys(frame["candidate"])) == ["b", "zeta", "alpha", "mid"]
    store.close()
