"""Comparisons of a finished run read its cells once per process, and never serve cells the run no longer has."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from textgen_core.compare import compare_models, paired_differences
from textgen_core.compare.run_cache import RUNS, RunCache
from textgen_core.model import Dataset, Datum
from textgen_core.store import Store

DATUMS = [f"d{i:02d}" for i in range(30)]


@pytest.fixture(autouse=True)
def empty_cache():
    RUNS.clear()
    yield
    RUNS.clear()


def _run(path, shift: float = 0.0, *, finish: bool = True) -> tuple[Store, int]:
    """Two models, two scores over 30 datums; model b scores ``shift`` above a on rouge1."""
    rows = [Datum(d, m, "q", f"answer {d}", ("r",), ()) for d in DATUMS for m in ("a", "b")]
    store = Store(path)
    run_id = store.create_run(store.save_dataset(Dataset("cache", rows, source="test")), ["rouge"], {}, {}, ["a", "b"])
    _write(store, run_id, shift)
    if finish:
        store.set_run_status(run_id, "finished")
    return store, run_id


def _write(store: Store, run_id: int, shift: float, datums: list[str] = DATUMS) -> None:
    rng = np.random.default_rng(len(datums))
    cells = []
    for d, (base, other) in zip(datums, rng.uniform(0, 0.5, size=(len(datums), 2))):
        cells += [(d, "a", "rouge", "rouge1", float(base), None, None),
                  (d, "b", "rouge", "rouge1", float(base) + shift, None, None),
                  (d, "a", "rouge", "rougeL", float(other), None, None),
                  (d, "b", "rouge", "rougeL", float(other) / 2, None, None)]
    store.write_cells(run_id, cells)


def _fresh(compute):
    """What ``compute`` gives from the store alone, with nothing cached."""
    RUNS.clear()
    return compute()


def test_a_finished_run_is_read_once_and_gives_the_same_numbers(tmp_path) -> None:
    store, run_id = _run(tmp_path / "a.duckdb", 0.1)
    first = compare_models(store, run_id, "a", "b", resamples=300)
    hits = RUNS.hits
    # Other settings and the per-datum pairs of the same run come from memory.
    again = compare_models(store, run_id, "a", "b", resamples=300, seed=3, scores=["rouge1"])
    pairs = paired_differences(store, run_id, "a", "b", "rougeL")
    assert RUNS.hits > hits
    pd.testing.assert_frame_equal(first, _fresh(lambda: compare_models(store, run_id, "a", "b", resamples=300)))
    pd.testing.assert_frame_equal(
        again, _fresh(lambda: compare_models(store, run_id, "a", "b", resamples=300, seed=3, scores=["rouge1"])))
    pd.testing.assert_frame_equal(pairs, _fresh(lambda: paired_differences(store, run_id, "a", "b", "rougeL")))
    assert pairs["datum_id"].tolist() == DATUMS
    store.close()


def test_a_resumed_run_is_read_again(tmp_path) -> None:
    store, run_id = _run(tmp_path / "a.duckdb", 0.1)
    before = compare_models(store, run_id, "a", "b", resamples=300, scores=["rouge1"])
    assert before.loc[0, "delta"] == pytest.approx(0.1)
    store.set_run_status(run_id, "running")  # what resume does before it scores the rest
    _write(store, run_id, -0.2)
    during = compare_models(store, run_id, "a", "b", resamples=300, scores=["rouge1"])
    assert during.loc[0, "delta"] == pytest.approx(-0.2)
    _write(store, run_id, 0.3)  # an unfinished run is never cached: each read sees the latest cells
    assert compare_models(store, run_id, "a", "b", resamples=300, scores=["rouge1"]).loc[0, "delta"] == \
        pytest.approx(0.3)
    store.set_run_status(run_id, "finished")
    compare_models(store, run_id, "a", "b", resamples=300, scores=["rouge1"])
    _write(store, run_id, 0.05)  # not something a finished run undergoes: only a new finish shows it
    store.set_run_status(run_id, "finished")
    after = compare_models(store, run_id, "a", "b", resamples=300, scores=["rouge1"])
    assert after.loc[0, "delta"] == pytest.approx(0.05)
    pd.testing.assert_frame_equal(
        after, _fresh(lambda: compare_models(store, run_id, "a", "b", resamples=300, scores=["rouge1"])))
    store.close()


def test_a_file_made_anew_at_the_same_path_is_read_again(tmp_path) -> None:
    path = tmp_path / "a.duckdb"
    store, run_id = _run(path, 0.1)
    assert compare_models(store, run_id, "a", "b", resamples=300, scores=["rouge1"]).loc[0, "delta"] == \
        pytest.approx(0.1)
    store.close()
    path.unlink()
    store, again = _run(path, -0.4)
    assert again == run_id
    assert compare_models(store, run_id, "a", "b", resamples=300, scores=["rouge1"]).loc[0, "delta"] == \
        pytest.approx(-0.4)
    store.close()


def test_datum_ids_only_the_scores_know_are_never_served_from_the_dataset_numbering(tmp_path) -> None:
    store, run_id = _run(tmp_path / "a.duckdb", 0.1, finish=False)
    _write(store, run_id, 0.1, datums=["zz"])  # rouge1 and rougeL of a datum the dataset lacks
    store.write_cells(run_id, [("zz", "a", "rouge", "rougeL", None, None, "judge failed")])
    store.set_run_status(run_id, "finished")
    # rougeL alone is numbered over the dataset... then rouge1 + rougeL must count zz, read anew.
    compare_models(store, run_id, "a", "b", resamples=300, scores=["rougeL"])
    both = compare_models(store, run_id, "a", "b", resamples=300)
    pd.testing.assert_frame_equal(both, _fresh(lambda: compare_models(store, run_id, "a", "b", resamples=300)))
    pairs = paired_differences(store, run_id, "a", "b", "rouge1")
    assert pairs["datum_id"].tolist() == [*DATUMS, "zz"]
    store.close()


def test_cached_arrays_are_read_only_and_the_cache_stays_within_its_bytes() -> None:
    cache = RunCache(max_bytes=3000)
    run = {"run_id": 1, "status": "finished", "created_at": 1, "finished_at": 2}
    cache.keep("/db", run, "x", np.zeros(200))
    with pytest.raises(ValueError):
        cache.lookup("/db", run, "x")[0] = 1.0
    cache.keep("/db", run, "y", np.zeros(200))  # 1600 + 1600 bytes: x, the least recently used, goes
    assert cache.lookup("/db", run, "x") is None and cache.lookup("/db", run, "y") is not None
    assert cache.lookup("/db", run | {"finished_at": 3}, "y") is None  # finished again: a new stamp
    cache.keep(":memory:", run, "z", 1)
    cache.keep("/db", run | {"status": "running"}, "z", 1)
    assert cache.lookup(":memory:", run, "z") is None and cache.lookup("/db", run, "z") is None
