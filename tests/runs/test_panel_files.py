"""Issue 34, points 12 and 13: panel files a hostile or unlucky analyst writes, and a member that never scores.

Every bad number is one error naming the file and the key (never a traceback, never 2.5 rounded to 2); a path
that is a FIFO, a device or a directory is refused at once (no hang, no memory filled); a member whose every
vote is unscored is said in a warning, which also says the "panel" is in effect one judge.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pandas as pd
import pytest

from judge_server import JudgeServer
from textgen_core.cli.main import main
from textgen_core.errors import ParameterError
from textgen_core.judge.settings import JudgeSettings
from textgen_core.runs.panel import read_panel
from textgen_core.small_file import MAX_FILE_BYTES

LEAD = JudgeSettings(base_url="http://127.0.0.1:9/v1", model="lead")


@pytest.mark.parametrize("text, words", [
    ("samples = inf", "samples=inf must be an integer"),
    ("samples = 2.5", "samples=2.5 must be an integer"),
    ("samples = nan", "samples=nan must be an integer"),
    ("samples = -inf", "samples=-inf must be an integer"),
    ('samples = "3"', "samples='3' must be an integer"),
    ("samples = 0", "samples=0 must be an integer"),
    ('[[member]]\nmodel = "b"\ntemperature = inf', "member 1: judge setting temperature=inf"),
    ('[[member]]\nmodel = "b"\ntemperature = nan', "member 1: judge setting temperature=nan"),
    ('[[member]]\nmodel = "b"\nprice_prompt = nan', "member 1: judge setting price_prompt_per_million=nan"),
    ('[[member]]\nmodel = "b"\nprice_completion = -1.0', "member 1: judge setting price_completion_per_million"),
])
def test_every_bad_number_is_one_error_naming_the_key(tmp_path: Path, text: str, words: str) -> None:
    panel = tmp_path / "panel.toml"
    panel.write_text(text + "\n")
    with pytest.raises(ParameterError) as caught:
        read_panel(str(panel), LEAD)
    assert str(caught.value).startswith(f"{panel}: ") and words in str(caught.value), caught.value


def test_two_samples_from_the_file_are_two(tmp_path: Path) -> None:
    panel = tmp_path / "panel.toml"
    panel.write_text('samples = 2\n[[member]]\nmodel = "b"\n')
    jury = read_panel(str(panel), LEAD)
    assert jury.samples == 2 and jury.names == ["lead", "b"]


def test_a_panel_path_that_is_not_a_regular_file_is_refused_at_once(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "panel.fifo"
    os.mkfifo(fifo)
    big = tmp_path / "big.toml"
    big.write_text("samples = 2\n" + "# padding\n" * (MAX_FILE_BYTES // 10 + 1))
    for path, words in ((fifo, "is a pipe (FIFO), not a regular file"), (Path("/dev/zero"), "is a device"),
                        (tmp_path, "is a directory"), (big, "larger than the 1,048,576 bytes"),
                        (tmp_path / "none.toml", "no such file")):
        outcome: list[str] = []
        reader = threading.Thread(target=lambda p=path: outcome.append(_error(p)), daemon=True)
        reader.start()
        reader.join(30)
        assert outcome, f"{path}: still reading after 30 s"
        assert f"panel file {path}" in outcome[0] and words in outcome[0], outcome[0]
    db = tmp_path / "runs.duckdb"
    code = main(["run", "sample", "--metrics", "qa_grade", "--db", str(db), "--judge-base-url",
                 "http://127.0.0.1:9/v1", "--judge-model", "lead", "--jury-panel", "/dev/zero"])
    err = capsys.readouterr().err
    assert code == 2 and "panel file /dev/zero: is a device" in err and "Traceback" not in err
    assert not db.exists()


def _error(path: Path) -> str:
    try:
        read_panel(str(path), LEAD)
    except ParameterError as exc:
        return str(exc)
    return "read without an error"


def _mute_member(request: dict) -> object:
    """The lead rates every answer 3; the member 'mute' answers off the scale, so its every vote is unscored."""
    if request.get("model") == "mute":
        return {"reason": "out of range", "score": 42}
    return {"reason": "fine", "score": 3}


def test_a_member_whose_every_vote_is_unscored_is_warned_of(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    rubric, panel, data = tmp_path / "rubric.toml", tmp_path / "panel.toml", tmp_path / "answers.csv"
    rubric.write_text('name = "clarity"\ncriteria = "Is the answer clear?"\n[output]\ntype = "rating"\n')
    panel.write_text('[[member]]\nmodel = "mute"\n')
    pd.DataFrame({"id": ["1", "2", "3"], "model": "m", "prediction": ["Yes.", "No, it is red.", "Blue."]}).to_csv(
        data, index=False)
    db = tmp_path / "runs.duckdb"
    monkeypatch.setenv("TEXTGEN_EVAL_JUDGE_API_KEY", "sk-panel")
    with JudgeServer(responder=_mute_member) as server:
        code = main(["run", str(data), "--metrics", "clarity", "--judge-metric", str(rubric), "--db", str(db),
                     "--judge-base-url", server.url, "--judge-model", "lead", "--jury-panel", str(panel),
                     "--retries", "0", "--timeout", "5"])
    out = capsys.readouterr().out
    assert code == 0
    warning = next((line for line in out.splitlines() if line.startswith("warning: panel member mute")), "")
    assert "none of its 3 votes is scored" in warning and "in effect a panel of one judge, lead" in warning, out
    assert main(["summary", "1", "--db", str(db)]) == 0  # the stored run's summary says it again
    assert "warning: panel member mute: none of its 3 votes is scored" in capsys.readouterr().out
