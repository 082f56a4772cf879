"""`textgen-eval export` (and `run --out`): one key name, what each row is about, and the stored failure modes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from textgen_core.cli.main import main
from textgen_core.run_export import long_export, modes_export, wide_export
from textgen_core.store import Store

ROWS = [("q1", "a", "Capital of France?", "Paris", "Paris", "geo"),
        ("q1", "b", "Capital of France?", "Lyon", "Paris", "geo"),
        ("q2", "a", "2+2?", "4", "4", "math"),
        ("q2", "b", "2+2?", "five", "4", "math"),
        ("q3", "a", "Largest ocean?", "Pacific", "Pacific", "geo"),
        ("q3", "b", "Largest ocean?", "=Atlantic", "Pacific", "geo")]


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One run (exact_match, token_f1) on a small file with a metadata column; its `run --out` beside it."""
    folder = tmp_path_factory.mktemp("export")
    source = folder / "answers.csv"
    pd.DataFrame(ROWS, columns=["id", "model", "question", "answer", "reference", "topic"]).to_csv(source, index=False)
    db = folder / "e.duckdb"
    assert main(["--db", str(db), "run", str(source), "--metrics", "exact_match,token_f1", "--workers", "1",
                 "--out", str(folder / "run.csv")]) == 0
    return db


@pytest.fixture
def run_db(scored: Path, tmp_path: Path, capsys) -> Path:
    """A copy of the scored database for one test, with the run's `--out` file beside it."""
    capsys.readouterr()
    shutil.copy(scored.parent / "run.csv", tmp_path / "run.csv")
    return Path(shutil.copy(scored, tmp_path / "e.duckdb"))


def _plant_modes(db: Path) -> None:
    """Two modes of model b's failing exact_match cells, written by the store's one writer of modes."""
    Store(db).failures.write_failure_modes(1, "test", {"seed": 0}, [
        (0, "wrong city", ["lyon", "city"], 1, None), (1, "wrong answer", ["five", "atlantic"], 2, None)], [
        (0, "q1", "b", "exact_match", "lowest", 0, "Lyon"), (1, "q2", "b", "exact_match", "lowest", 0, "five"),
        (1, "q3", "b", "exact_match", "lowest", 0, "=Atlantic")])


def test_every_table_is_keyed_by_datum_id_with_what_the_row_is_about(run_db: Path, tmp_path: Path, capsys) -> None:
    out, long = tmp_path / "wide.csv", tmp_path / "long.jsonl"
    assert main(["--db", str(run_db), "export", "1", "--out", str(out)]) == 0
    assert main(["--db", str(run_db), "export", "1", "--out", str(long), "--long"]) == 0
    wide = pd.read_csv(out, dtype={"datum_id": str}, keep_default_na=False)
    assert list(wide.columns) == ["datum_id", "model", "query", "prediction", "references", "topic",
                                  "exact_match", "f1"]  # no failure modes stored: no column for them
    assert wide.equals(pd.read_csv(tmp_path / "run.csv", dtype={"datum_id": str}, keep_default_na=False))
    row = wide.set_index(["datum_id", "model"]).loc[("q2", "b")]
    assert (row["query"], row["prediction"], json.loads(row["references"]), row["topic"], row["exact_match"]) == \
        ("2+2?", "five", ["4"], "math", 0.0)
    assert wide.set_index(["datum_id", "model"]).loc[("q3", "b"), "prediction"] == "'=Atlantic"  # no live formula
    cells = [json.loads(line) for line in long.read_text(encoding="utf-8").splitlines()]
    assert len(cells) == 12 and all("id" not in c and c["datum_id"] for c in cells)
    first = next(c for c in cells if (c["datum_id"], c["model"], c["score"]) == ("q1", "b", "f1"))
    assert (first["query"], first["prediction"], first["references"], first["topic"], first["value"]) == \
        ("Capital of France?", "Lyon", ["Paris"], "geo", 0.0)
    assert first["signature"] == Store(run_db, read_only=True).get_run(1)["signatures"]["token_f1"] != ""


def test_stored_failure_modes_in_each_table_and_a_modes_file(run_db: Path, tmp_path: Path, capsys) -> None:
    _plant_modes(run_db)
    store = Store(run_db, read_only=True)
    wide = wide_export(store, 1).set_index(["datum_id", "model"])
    assert wide.loc[("q1", "b"), "failure_modes"] == ["exact_match: wrong city"]
    assert wide.loc[("q3", "b"), "failure_modes"] == ["exact_match: wrong answer"]
    assert wide.loc[("q1", "a"), "failure_modes"] == []  # passing cells belong to no mode
    long = long_export(store, 1).set_index(["datum_id", "model", "score"])
    assert long.loc[("q2", "b", "exact_match"), "failure_modes"] == ["wrong answer"]
    assert long.loc[("q2", "b", "f1"), "failure_modes"] == []  # modes of exact_match only
    modes = modes_export(store, 1)
    assert modes[["mode", "mode_name", "datum_id", "model", "unit", "item"]].values.tolist() == [
        [0, "wrong city", "q1", "b", "exact_match", 1], [1, "wrong answer", "q2", "b", "exact_match", 1],
        [1, "wrong answer", "q3", "b", "exact_match", 1]]
    assert modes["mode_words"].iloc[0] == ["lyon", "city"]

    path = tmp_path / "modes.csv"
    assert main(["--db", str(run_db), "export", "1", "--out", str(tmp_path / "w.csv"), "--modes", str(path)]) == 0
    assert f"wrote {path} (2 modes, 3 failing judgements)" in capsys.readouterr().out
    back = pd.read_csv(path, keep_default_na=False)
    assert back["datum_id"].tolist() == ["q1", "q2", "q3"] and back["text"].tolist()[2] == "'=Atlantic"
    written = pd.read_csv(tmp_path / "w.csv", keep_default_na=False).set_index(["datum_id", "model"])
    assert json.loads(written.loc[("q1", "b"), "failure_modes"]) == ["exact_match: wrong city"]


def test_a_run_without_modes_says_so_and_writes_no_modes_file(run_db: Path, tmp_path: Path, capsys) -> None:
    path = tmp_path / "modes.csv"
    assert main(["--db", str(run_db), "export", "1", "--out", str(tmp_path / "w.csv"), "--modes", str(path)]) == 0
    assert "run 1 has no stored failure modes: 'textgen-eval failures 1' groups them" in capsys.readouterr().out
    assert not path.exists()
    assert modes_export(Store(run_db, read_only=True), 1).empty


def test_an_unknown_run_is_one_clear_error(run_db: Path, tmp_path: Path, capsys) -> None:
    assert main(["--db", str(run_db), "export", "7", "--out", str(tmp_path / "w.csv"), "--modes", "m.csv"]) == 2
    err = capsys.readouterr().err
    assert "7" in err and "Traceback" not in err and not (tmp_path / "w.csv").exists()
