"""The DuckDB store: round trips, transactions, upserts, SQL aggregates."""

from __future__ import annotations

import statistics

import pytest

from textgen_core.errors import StoreError
from textgen_core.model import Dataset, Datum
from textgen_core.store import Store


def _dataset(name: str = "d", n: int = 4) -> Dataset:
    rows = [Datum(str(i), model, f"q{i}", f"p{i} {model}", (f"r{i}", f"alt{i}"), (f"c{i}a", f"c{i}b"),
                  {"human": str(i % 2)}) for i in range(n) for model in ("a", "b")]
    return Dataset(name, rows, source="mem", mapping={"query": "question"}, metadata_columns=("human",))


def test_dataset_round_trip(db_path):
    store = Store(db_path)
    dataset_id = store.save_dataset(_dataset())
    loaded = store.load_dataset(dataset_id)
    assert loaded.rows == _dataset().rows
    assert loaded.metadata_columns == ("human",)
    assert loaded.mapping == {"query": "question"}
    listed = store.list_datasets()
    assert listed["name"].tolist() == ["d"] and listed["n_rows"].tolist() == [8]
    assert sorted(listed["models"][0]) == ["a", "b"]


def test_data_survives_reopen(db_path):
    Store(db_path).save_dataset(_dataset())
    assert len(Store(db_path).load_dataset(1).rows) == 8


def test_duplicate_name_refused_unless_replace(db_path):
    store = Store(db_path)
    store.save_dataset(_dataset())
    with pytest.raises(StoreError, match="already exists"):
        store.save_dataset(_dataset())
    new_id = store.save_dataset(_dataset(n=2), replace=True)
    assert len(store.load_dataset(new_id).rows) == 4
    assert len(store.list_datasets()) == 1


def test_failed_dataset_write_leaves_store_unchanged(db_path):
    store = Store(db_path)
    store.save_dataset(_dataset("first"))
    bad = _dataset("second")
    bad.rows.append(bad.rows[0])  # duplicate (datum id, model) violates the primary key
    with pytest.raises(Exception):
        store.save_dataset(bad)
    assert store.list_datasets()["name"].tolist() == ["first"]
    assert len(store.load_dataset(store.dataset_id("first")).rows) == 8


def test_scores_upsert_and_sql_aggregates(db_path):
    store = Store(db_path)
    dataset_id = store.save_dataset(_dataset())
    run_id = store.create_run(dataset_id, ["m"], {"m": {}}, {"m": "sig"}, ["a", "b"])
    values = [0.1, 0.4, 0.35, None]
    cells = [(str(i), "a", "m", "m", v, {"i": i}, None if v is not None else "judge failed") for i, v in enumerate(values)]
    store.write_cells(run_id, cells)
    store.write_cells(run_id, cells)  # re-running writes the same cells, never duplicates
    summary = store.summary(run_id).set_index("model").loc["a"]
    scored = [v for v in values if v is not None]
    assert summary["n_scored"] == 3 and summary["n_unscored"] == 1
    assert summary["mean"] == pytest.approx(statistics.mean(scored), abs=1e-12)
    assert summary["median"] == pytest.approx(statistics.median(scored), abs=1e-12)
    assert summary["std"] == pytest.approx(statistics.stdev(scored), abs=1e-12)
    long = store.scores(run_id)
    assert len(long) == 4
    assert long.loc[long["value"].isna(), "reason"].tolist() == ["judge failed"]
    wide = store.wide_scores(run_id)
    assert wide.columns.tolist() == ["datum_id", "model", "m"] and len(wide) == 4  # the key of every table


def test_failed_run_keeps_earlier_runs(db_path):
    store = Store(db_path)
    dataset_id = store.save_dataset(_dataset())
    first = store.create_run(dataset_id, ["m"], {}, {}, ["a"])
    store.write_cells(first, [("0", "a", "m", "m", 1.0, None, None)])
    store.set_run_status(first, "finished", duration_s=1.0)
    second = store.create_run(dataset_id, ["m"], {}, {}, ["a"])
    with pytest.raises(Exception):
        store.write_cells(second, [("0", "a", "m", "m", 1.0, None, None), ("0", "a", "m", "m", "not a number", None, None)])
    store.set_run_status(second, "failed", error="boom")
    assert store.scores(second).empty
    assert store.scores(first)["value"].tolist() == [1.0]
    assert store.get_run(first)["status"] == "finished"
    assert store.get_run(second)["error"] == "boom"


def test_delete_dataset_cascades(db_path):
    store = Store(db_path)
    dataset_id = store.save_dataset(_dataset())
    run_id = store.create_run(dataset_id, ["m"], {}, {}, ["a"])
    store.write_cells(run_id, [("0", "a", "m", "m", 1.0, None, None)])
    store.set_run_status(run_id, "finished")  # a running run's dataset cannot be deleted
    store.delete_dataset(dataset_id)
    assert store.list_datasets().empty and store.list_runs().empty
    with pytest.raises(StoreError):
        store.get_run(run_id)


def test_rename_and_search(db_path):
    store = Store(db_path)
    dataset_id = store.save_dataset(_dataset())
    store.rename_dataset(dataset_id, "renamed")
    assert store.dataset_id("renamed") == dataset_id
    run_id = store.create_run(dataset_id, ["exact_match"], {}, {}, ["a", "b"])
    found = store.find_rows(run_id, text="P3 B")  # the dashboard's row search: case-insensitive, any field
    assert found[["datum_id", "model"]].values.tolist() == [["3", "b"]]
    assert len(store.datum(dataset_id, "2")) == 2


def test_values_never_formatted_into_sql(db_path):
    store = Store(db_path)
    hostile = "x'); DROP TABLE scores; --"
    dataset_id = store.save_dataset(_dataset(hostile))
    assert store.dataset_id(hostile) == dataset_id
    run_id = store.create_run(dataset_id, ["exact_match"], {}, {}, ["a", "b"])
    assert store.find_rows(run_id, text=hostile).empty
    assert store.list_datasets()["name"].tolist() == [hostile]


def test_dataset_fields_in_sql(db_path):
    store = Store(db_path)
    rows = [Datum("1", "a", None, "p", (), ("c",), {"h": "1"}), Datum("2", "a", "", "", (), (), {"h": "0"})]
    dataset_id = store.save_dataset(Dataset("f", rows, metadata_columns=("h",)))
    assert store.dataset_fields(dataset_id) == {"prediction", "contexts", "h"}
    with pytest.raises(StoreError):
        store.dataset_fields(999)


def test_upload_mappings_and_judge_profiles_are_remembered_and_keys_never_stored(tmp_path):
    import pytest as _pytest

    from textgen_core.store import Store

    db = Store(tmp_path / "memory.duckdb")
    assert db.remembered_mapping("abc") is None and db.judge_profiles().empty
    db.remember_mapping("abc", "a.csv", {"id": "ticket_id", "query": "question"})
    db.remember_mapping("abc", "b.csv", {"id": "ticket_id", "query": "category"})  # a later save wins
    assert db.remembered_mapping("abc") == {"id": "ticket_id", "query": "category"}
    db.save_judge_profile("local", {"base_url": "http://127.0.0.1:9/v1", "model": "judge", "concurrency": 4})
    db.save_judge_profile("local", {"base_url": "http://127.0.0.1:9/v1", "model": "judge-2", "concurrency": 4})
    profiles = db.judge_profiles()
    assert list(profiles["name"]) == ["local"] and profiles["settings"][0]["model"] == "judge-2"
    for secret in ("api_key", "API_KEY", "token"):
        with _pytest.raises(ValueError, match="never stores a key"):
            db.save_judge_profile("leak", {"model": "m", secret: "sk-123"})
    with _pytest.raises(ValueError, match="needs a name"):
        db.save_judge_profile("  ", {"model": "m"})
    assert b"sk-123" not in (tmp_path / "memory.duckdb").read_bytes()
    assert list(db.judge_profiles()["name"]) == ["local"]
