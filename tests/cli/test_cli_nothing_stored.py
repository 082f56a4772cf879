"""Commands that score nothing store nothing: no dataset, no run, and no new database file."""

from __future__ import annotations

from pathlib import Path

import pytest

from textgen_core.cli.main import main
from textgen_core.store import Store

CSV = "id,model,question,answer,reference\nq1,m1,Q?,Paris,Paris\nq1,m2,Q?,Lyon,Paris\n"


@pytest.fixture
def data_file(tmp_path: Path) -> Path:
    path = tmp_path / "outputs.csv"
    path.write_text(CSV, encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def no_judge_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("TEXTGEN_EVAL_JUDGE_BASE_URL", "TEXTGEN_EVAL_JUDGE_MODEL", "TEXTGEN_EVAL_JUDGE_API_KEY"):
        monkeypatch.delenv(name, raising=False)


REFUSED = [
    (["--metrics", "exact_match", "--models", "m1,nobody"], "not in the dataset"),
    (["--metrics", "faithfulness"], "need a judge"),
    (["--metrics", "exact_match,answer_relevance"], "need a judge"),
    (["--metrics", "mrr"], "contexts"),
]


@pytest.mark.parametrize(("extra", "words"), REFUSED, ids=[r[1] for r in REFUSED])
def test_refused_run_creates_no_database(tmp_path: Path, data_file: Path, extra: list[str], words: str,
                                         capsys) -> None:
    db = tmp_path / "new.duckdb"
    assert main(["--db", str(db), "run", str(data_file), *extra]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err, err
    assert not db.exists() and not Path(f"{db}.wal").exists()


@pytest.mark.parametrize(("extra", "words"), REFUSED, ids=[r[1] for r in REFUSED])
def test_refused_run_leaves_an_existing_database_as_it_was(tmp_path: Path, data_file: Path, extra: list[str],
                                                           words: str, capsys) -> None:
    db = tmp_path / "kept.duckdb"
    assert main(["--db", str(db), "run", str(data_file), "--metrics", "exact_match", "--name", "first"]) == 0
    before = (Store(db).list_datasets()["name"].tolist(), len(Store(db).list_runs()))
    other = tmp_path / "other.csv"
    other.write_text(CSV.replace("Lyon", "Nice"), encoding="utf-8")  # a new dataset, if it were stored
    assert main(["--db", str(db), "run", str(other), *extra]) == 2
    assert (Store(db).list_datasets()["name"].tolist(), len(Store(db).list_runs())) == before


def test_dry_run_writes_nothing(tmp_path: Path, data_file: Path, capsys) -> None:
    db = tmp_path / "dry.duckdb"
    assert main(["--db", str(db), "run", str(data_file), "--metrics", "exact_match", "--dry-run"]) == 0
    assert "2 rows" in capsys.readouterr().out
    assert not db.exists()
    # with judge metrics it estimates the calls, still without a database
    assert main(["--db", str(db), "run", str(data_file), "--metrics", "answer_relevance", "--dry-run",
                 "--judge-base-url", "http://127.0.0.1:9/v1", "--judge-model", "judge"]) == 0
    assert "judge calls" in capsys.readouterr().out
    assert not db.exists()


def test_dry_run_on_a_stored_dataset_changes_nothing(tmp_path: Path, data_file: Path, capsys) -> None:
    db = tmp_path / "dry.duckdb"
    assert main(["--db", str(db), "run", str(data_file), "--metrics", "exact_match", "--name", "outs"]) == 0
    runs = len(Store(db).list_runs())
    assert main(["--db", str(db), "run", "outs", "--metrics", "rouge", "--dry-run"]) == 0
    assert len(Store(db).list_runs()) == runs
    assert main(["--db", str(db), "run", str(data_file), "--metrics", "rouge", "--dry-run", "--name", "fresh"]) == 0
    assert Store(db).list_datasets()["name"].tolist() == ["outs"]


def test_unknown_stored_dataset_creates_no_database(tmp_path: Path, capsys) -> None:
    db = tmp_path / "none.duckdb"
    assert main(["--db", str(db), "run", "no-such-name", "--metrics", "exact_match"]) == 2
    assert "file not found" in capsys.readouterr().err
    assert not db.exists()
