"""Every file of the bad-input corpus gives the same verdict through the CLI and the Upload page.

A refused file prints one line naming file, row and column (no traceback) and leaves no
database file behind; a hostile but valid file loads the same way on both paths.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from app_helpers import all_text, no_exception, page, store
from test_datasets_bad_inputs import BAD, CASES, LOADABLE

from textgen_core.cli.main import main
from textgen_core.datasets import load_dataset
from textgen_core.errors import InputError
from textgen_dashboard import state

# The cases read with the default (guessed) mapping: what both the CLI and the Upload page do by default.
DEFAULT_CASES = sorted({case[0] for case in CASES if not case[1]})


def _expected(name: str) -> str:
    """The one message load_dataset gives for the file when it is named by its file name, as uploads are."""
    with pytest.raises(InputError) as caught:
        load_dataset((BAD / name).read_bytes(), file_name=name)
    return caught.value.describe()


def _cli(tmp_path: Path, name: str, capsys: pytest.CaptureFixture, *extra: str,
         metric: str = "exact_match") -> tuple[int, str, str]:
    copy = tmp_path / name  # the CLI names the file by its name, like an upload
    copy.write_bytes((BAD / name).read_bytes())
    code = main(["--db", str(tmp_path / "t.duckdb"), "run", str(copy), "--metrics", metric, *extra])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("name", DEFAULT_CASES)
def test_cli_refuses_with_the_loader_message_and_stores_nothing(tmp_path: Path, name: str, capsys) -> None:
    code, _, err = _cli(tmp_path, name, capsys, metric="lengths")  # needs a prediction only
    assert code == 2, err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert errors == [f"error: {_expected(name)}"], err  # one line (a progress line may come before it)
    assert "Traceback" not in err
    assert not (tmp_path / "t.duckdb").exists()  # a refused file creates no database file


@pytest.mark.parametrize("name", sorted(LOADABLE))
def test_cli_loads_hostile_but_valid_files(tmp_path: Path, name: str, capsys) -> None:
    models, references, warning_words = LOADABLE[name]
    code, out, err = _cli(tmp_path, name, capsys, metric="exact_match" if all(references) else "lengths")
    assert code == 0, err
    for word in warning_words:
        assert word in err
    from textgen_core.store import Store

    db = Store(tmp_path / "t.duckdb")
    assert db.get_run(1)["models"] == models
    if name == "code_pipes.csv":  # `return x || y;` matches itself: the reference is not split on ||
        assert set(db.scores(1)["value"]) == {1.0}


def test_cli_can_treat_null_references_as_missing(tmp_path: Path, capsys) -> None:
    code, _, err = _cli(tmp_path, "nan_references.csv", capsys, "--null-references", "missing")
    assert code == 0 and "treated as missing" in err
    from textgen_core.store import Store

    scores = Store(tmp_path / "t.duckdb").scores(1).set_index("datum_id")
    assert scores.loc["q1", "value"] == 1.0
    assert scores.loc[["q2", "q3", "q4"], "value"].isna().all()  # unscored (no reference), never 0


def test_upload_page_gives_the_same_messages(app_db) -> None:
    """One AppTest session uploads every corpus file in turn, as a user would."""
    at = page("views/upload.py")
    for name in DEFAULT_CASES:
        at.session_state[state.UPLOAD_FILE] = (name, (BAD / name).read_bytes())
        at.run()
        no_exception(at)
        shown = "\n".join(str(e.value) for e in at.error).replace("\\", "")
        assert _expected(name).replace("\\", "") in shown, (name, shown)
    for name, (models, _, warning_words) in sorted(LOADABLE.items()):
        at.session_state[state.UPLOAD_FILE] = (name, (BAD / name).read_bytes())
        at.run()
        no_exception(at)
        assert not at.error, (name, [e.value for e in at.error])
        text = all_text(at)
        assert all(model.replace("\\", "") in text for model in models), (name, text)
        for word in warning_words:
            assert word in "\n".join(str(w.value) for w in at.warning).replace("\\", ""), name
    assert store().list_datasets().empty  # nothing is stored before Save


# The cases that need a mapping of their own, given as the CLI's flags: file -> (flags, row, column, words).
MAPPED = {
    "bad_json_references.csv": (["--list-format", "json"], 1, "reference", ["starts with '['", "not valid JSON"]),
    "mapped_column_missing.csv": (["--map", "query=question"], None, "question",
                                  ["query column 'question' is not in the file", "did you mean 'question_text'"]),
    "wide_missing_column.csv": (["--wide", "gpt=prediction_gpt", "--wide", "claude=prediction_claude"], None,
                                "prediction_claude", ["'claude' prediction column 'prediction_claude' is not in the file"]),
    "missing_reference.csv": ([], None, "references", ["exact_match", "references column", "none is mapped"]),
}


@pytest.mark.parametrize("name", sorted(MAPPED))
def test_cli_refuses_files_that_need_their_own_mapping(tmp_path: Path, name: str, capsys) -> None:
    flags, row, column, words = MAPPED[name]
    code, _, err = _cli(tmp_path, name, capsys, *flags)
    assert code == 2, err
    [line] = [line for line in err.splitlines() if line.startswith("error:")]
    where = f"file {name!r}" + (f", row {row}" if row else "") + f", column {column!r}:"
    assert line.startswith(f"error: {where}"), line
    assert all(word in line for word in words), line
    assert not (tmp_path / "t.duckdb").exists()
