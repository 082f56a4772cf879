"""Dataset versions and named runs from the command line: the same content again is the same version (said so,
nothing stored twice, whatever the file's name), an edited file is the next version with its diff, and runs are
named, tagged, noted and listed by tag; every bad input is one clear line and changes nothing."""

from __future__ import annotations

import io
import shutil
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from textgen_core.cli.main import main
from textgen_core.store import Store

ROWS = [("q1", "alpha", "What is 2+2?", "4", "4"), ("q1", "beta", "What is 2+2?", "four", "4"),
        ("q2", "alpha", "Capital of France?", "Paris", "Paris"), ("q2", "beta", "Capital of France?", "Lyon", "Paris"),
        ("q3", "alpha", "Sky colour?", "blue", "blue"), ("q3", "beta", "Sky colour?", "blue", "blue")]


def write(path: Path, rows) -> Path:
    lines = ["id,model,query,prediction,reference"] + [",".join(row) for row in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def run(db: Path, *args: str) -> int:
    return main(["--db", str(db), *args])


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The file after one run of pairs.csv, made once per module (each test gets its own copy: `db`)."""
    folder = tmp_path_factory.mktemp("versions")
    db = folder / "v.duckdb"
    out = io.StringIO()
    with redirect_stdout(out):
        assert run(db, "run", str(write(folder / "pairs.csv", ROWS)), "--metrics", "exact_match") == 0
    assert "version 1 of 'pairs'" in out.getvalue()
    Store(db).close()
    assert not db.with_name(db.name + ".wal").exists()  # the closed file holds everything
    return db


@pytest.fixture
def db(tmp_path: Path, first_run: Path) -> Path:
    write(tmp_path / "pairs.csv", ROWS)  # the file the run read, where the tests edit it
    db = tmp_path / "v.duckdb"
    shutil.copyfile(first_run, db)
    return db


@pytest.mark.parametrize("whole", [False, True], ids=["streamed", "whole file"])
def test_same_content_under_another_name_and_order_is_the_same_version(tmp_path: Path, db: Path, capsys,
                                                                        whole: bool) -> None:
    again = write(tmp_path / "copy of pairs.csv", list(reversed(ROWS)))
    extra = ["--metrics", "exact_match,bleu"] if whole else ["--metrics", "exact_match"]  # bleu reads whole files
    assert run(db, "run", str(again), *extra) == 0
    out = capsys.readouterr().out
    assert "using stored dataset 'pairs'" in out and "version 1 of 'pairs'" in out, out
    store = Store(db, read_only=True)
    assert store.list_datasets()["name"].tolist() == ["pairs"]
    assert store.list_runs()["dataset_id"].tolist() == [1, 1]


def test_an_edited_file_is_the_next_version_with_its_diff(tmp_path: Path, db: Path, capsys) -> None:
    edited = [r for r in ROWS if r[0] != "q3"] + [("q4", "alpha", "Two plus two?", "4", "4"),
                                                   ("q4", "gamma", "Two plus two?", "4", "4")]
    edited[3] = ("q2", "beta", "Capital of France?", "Paris", "Paris")
    assert run(db, "run", str(write(tmp_path / "pairs.csv", edited)), "--metrics", "exact_match") == 0
    assert "version 2 of 'pairs'" in capsys.readouterr().out
    assert run(db, "datasets") == 0
    listing = capsys.readouterr().out
    assert "pairs (2)" in listing and listing.count(" pairs ") >= 2
    assert run(db, "datasets", "pairs") == 0
    versions = capsys.readouterr().out
    assert "first version" in versions and "datums added 1, removed 1, changed 1; models added: gamma" in versions
    assert run(db, "datasets", "pairs (2)", "--diff", "1", "2") == 0
    diff = capsys.readouterr().out
    assert "added: q4" in diff and "removed: q3" in diff and "changed: q2" in diff
    assert run(db, "datasets", "pairs", "--diff", "1", "9") == 2
    assert "has no version 9; versions: 1, 2" in capsys.readouterr().err
    assert run(db, "datasets", "nope") == 2
    assert "no dataset named 'nope'; datasets: pairs" in capsys.readouterr().err
    assert run(db, "runs") == 0
    assert "pairs v2" in capsys.readouterr().out


def test_runs_are_named_tagged_noted_and_listed_by_tag(db: Path, capsys) -> None:
    assert run(db, "rename", "1", "prod week 1") == 0
    assert run(db, "tag", "prod week 1", "prod", "weekly") == 0
    assert run(db, "note", "1", "the model in production on Monday") == 0
    capsys.readouterr()
    assert run(db, "runs", "--tag", "prod") == 0
    out = capsys.readouterr().out
    assert "prod week 1" in out and "prod,weekly" in out and "note on run 1: the model in production" in out
    assert run(db, "runs", "--tag", "prod", "--tag", "nightly") == 0
    assert "no run has the tags prod, nightly" in capsys.readouterr().out
    assert run(db, "tag", "1", "weekly", "--remove") == 0
    assert "tags: prod\n" in capsys.readouterr().out
    assert run(db, "note", "prod week 1", "") == 0 and run(db, "rename", "1", "--clear") == 0
    labels = Store(db, read_only=True).run_names.run_labels()
    assert labels[["name", "note"]].isna().all().all() and list(labels["tags"].iloc[0]) == ["prod"]


@pytest.mark.parametrize("args, message", [
    (("rename", "1", "7"), "cannot be a bare number"),
    (("rename", "1", "a:b"), "cannot hold ':'"),
    (("rename", "1", "   "), "cannot be empty"),
    (("rename", "1"), "give the run a new name, or --clear"),
    (("rename", "9", "x"), "no run with id 9"),
    (("rename", "ghost", "x"), "no run named 'ghost'"),
    (("tag", "1", "two words"), "tag 'two words' holds ' '"),
    (("tag", "1", "x" * 65), "at most 64 characters"),
    (("note", "1", "x" * 10_001), "at most 10,000 characters"),
    (("datasets", "--diff", "1", "2"), "--diff compares two versions of one dataset"),
])
def test_bad_input_is_one_clear_line_and_changes_nothing(db: Path, capsys, args, message) -> None:
    capsys.readouterr()
    assert run(db, *args) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    labels = Store(db, read_only=True).run_names.run_labels()
    assert labels["name"].isna().all() and not list(labels["tags"].iloc[0])


def test_a_name_is_unique_and_a_deleted_run_takes_its_labels_along(tmp_path: Path, db: Path, capsys) -> None:
    assert run(db, "run", str(write(tmp_path / "other.csv", ROWS[:2])), "--metrics", "exact_match") == 0
    assert run(db, "rename", "1", "base") == 0 and run(db, "tag", "1", "keep") == 0
    assert run(db, "rename", "2", "base") == 2
    assert "run 1 is already named 'base'" in capsys.readouterr().err
    assert run(db, "delete-run", "1") == 0
    assert Store(db, read_only=True).run_names.run_labels()["run_id"].tolist() == [2]
    assert run(db, "rename", "2", "base") == 0  # the name is free again


def test_run_names_and_tags_the_run_it_makes(tmp_path: Path, db: Path, capsys) -> None:
    other = write(tmp_path / "next.csv", ROWS[:4])
    assert run(db, "run", str(other), "--metrics", "exact_match", "--run-name", "candidate v2", "--tag", "nightly",
               "--tag", "gpu") == 0
    labels = Store(db, read_only=True).run_names.run_labels().set_index("run_id")
    assert labels.loc[2, "name"] == "candidate v2" and list(labels.loc[2, "tags"]) == ["nightly", "gpu"]
    capsys.readouterr()
    assert run(db, "run", str(other), "--metrics", "exact_match", "--run-name", "candidate v2") == 2
    assert "already named 'candidate v2'" in capsys.readouterr().err
    assert run(db, "run", str(other), "--metrics", "exact_match", "--tag", "bad tag") == 2
    assert "tag 'bad tag' holds ' '" in capsys.readouterr().err
    assert len(Store(db, read_only=True).list_runs()) == 2  # nothing scored for the refused commands
