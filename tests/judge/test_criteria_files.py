"""Issue 34, points 5, 10, 12 and 13: what a hostile or unlucky analyst writes in a rubric file.

A name that is a built-in metric's or a built-in score's, one name in two files, a rating without levels (from a
file, and ``levels: []`` from Python: resumed, summarised, compared and exported in another program), numbers
that are not finite, files that are not regular files or are too large, and inputs the data does not have.
Every refusal is one error line naming the file and the key, before anything is stored.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Iterator

import pandas as pd
import pytest

from judge_criteria_scripting import CriteriaJudge
from judge_server import JudgeServer
from textgen_core.api import score
from textgen_core.cli.main import main
from textgen_core.judge.metrics.criteria import criterion, define
from textgen_core.errors import ParameterError
from textgen_core.judge.settings import JudgeSettings
from textgen_core.small_file import MAX_FILE_BYTES
from textgen_core.store import Store

ROOT = Path(__file__).resolve().parents[2]
YES_NO = 'criteria = "Is the reply polite?"\n[output]\ntype = "yes_no"\n'


@pytest.fixture()
def server() -> Iterator[JudgeServer]:
    with JudgeServer(responder=CriteriaJudge()) as running:
        yield running


def _run(tmp_path: Path, metric: str, *files: Path, extra: tuple[str, ...] = ()) -> list[str]:
    args = ["run", "sample", "--metrics", metric, "--db", str(tmp_path / "runs.duckdb")]
    for path in files:
        args += ["--judge-metric", str(path)]
    return args + ["--judge-base-url", "http://127.0.0.1:9/v1", "--judge-model", "judge", *extra]


def _refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str]) -> str:
    code = main(args)
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and "Traceback" not in err, err
    assert not (tmp_path / "runs.duckdb").exists()  # refused before anything is stored
    return err


@pytest.mark.parametrize("name, owner", [("f1", "token_f1"), ("rouge1", "rouge"), ("rouge7", "rouge"),
                                         ("label_correct", "classification"), ("answer_length", "lengths"),
                                         ("bertscore_f1", "bertscore"), ("reciprocal_rank", "mrr"),
                                         ("exact_match", None), ("faithfulness", None)])
def test_a_custom_metric_named_like_a_built_in_score_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               name: str, owner: str | None) -> None:
    rubric = tmp_path / "rubric.toml"
    rubric.write_text(f'name = "{name}"\n{YES_NO}')
    err = _refused(tmp_path, capsys, _run(tmp_path, name, rubric))
    assert str(rubric) in err and f"'name' {name!r}" in err
    assert (f"is a score of the built-in metric {owner}" if owner else "is a built-in metric") in err
    with pytest.raises(ParameterError, match="choose another name"):  # the Python API and the dashboard too
        define({"name": name, "criteria": "c", "output": {"type": "yes_no"}}, "Python")


def test_one_name_in_two_files_is_refused_naming_both(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = tmp_path / "a.toml", tmp_path / "b.toml"
    first.write_text(f'name = "polite"\n{YES_NO}')
    second.write_text(f'name = "polite"\n{YES_NO.replace("polite?", "kind?")}')
    err = _refused(tmp_path, capsys, _run(tmp_path, "polite", first, second))
    assert f"'polite' is defined in two files, {first} and {second}" in err


def test_the_same_file_twice_is_one_definition(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rubric = tmp_path / "a.toml"
    rubric.write_text(f'name = "polite_twice"\n{YES_NO}')
    assert main(["metrics", "polite_twice", "--judge-metric", str(rubric), "--judge-metric", str(rubric)]) == 0
    assert "polite_twice" in capsys.readouterr().out


@pytest.mark.parametrize("line, key", [("min = inf", "output.min"), ("max = inf", "output.max"),
                                       ("min = nan", "output.min"), ("max = -inf", "output.max"),
                                       ("max = 1e400", "output.max")])
def test_a_number_that_is_not_finite_is_one_error_naming_the_key(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                 line: str, key: str) -> None:
    rubric = tmp_path / "rubric.toml"
    rubric.write_text(f'name = "stars"\ncriteria = "c"\n[output]\ntype = "rating"\n{line}\n')
    err = _refused(tmp_path, capsys, _run(tmp_path, "stars", rubric))
    assert f"key {key!r} must be a whole number" in err and str(rubric) in err


def test_a_rubric_that_is_not_a_regular_file_is_refused_at_once(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "rubric.fifo"
    os.mkfifo(fifo)
    big = tmp_path / "big.toml"
    big.write_text(f'name = "big"\n{YES_NO}' + "# padding\n" * (MAX_FILE_BYTES // 10 + 1))
    for path, words in ((fifo, "is a pipe (FIFO), not a regular file"), (Path("/dev/zero"), "is a device"),
                        (tmp_path, "is a directory"), (big, "larger than the 1,048,576 bytes")):
        done = threading.Event()
        result: list[str] = []
        worker = threading.Thread(target=lambda p=path: (result.append(_refused(tmp_path, capsys, _run(
            tmp_path, "x", p))), done.set()), daemon=True)
        worker.start()
        assert done.wait(30), f"{path}: still reading after 30 s"
        assert f"judge metric file {path}" in result[0] and words in result[0], result[0]


def test_a_rating_without_levels_is_accepted_from_a_file(tmp_path: Path, server: JudgeServer,
                                                        capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    rubric = tmp_path / "rubric.toml"
    rubric.write_text('name = "brevity"\ncriteria = "Is the answer short?"\n[output]\ntype = "rating"\n'
                      'min = 1\nmax = 5\n')
    monkeypatch.setenv("TEXTGEN_EVAL_JUDGE_API_KEY", "sk-levels")
    db = tmp_path / "levels.duckdb"
    code = main(["run", "sample", "--metrics", "brevity", "--judge-metric", str(rubric), "--db", str(db),
                 "--judge-base-url", server.url, "--judge-model", "judge", "--retries", "1"])
    assert code == 0, capsys.readouterr()
    scores = Store(db).scores(1)
    assert scores["value"].notna().all() and set(scores["value"]) <= {1.0, 2.0, 3.0, 4.0, 5.0}


def test_empty_levels_from_python_equal_no_levels_and_the_run_is_readable_elsewhere(
        tmp_path: Path, server: JudgeServer) -> None:
    definition = {"name": "conciseness", "criteria": "Is the answer concise?",
                  "output": {"type": "rating", "min": 1, "max": 5, "levels": []}}
    assert criterion(definition) == criterion({**definition, "output": {"type": "rating", "min": 1, "max": 5}})
    assert criterion({**definition, "output": {**definition["output"], "levels": {}}}).output.levels == ()
    frame = pd.DataFrame({"id": ["1", "2", "3", "1", "2", "3"], "model": ["a"] * 3 + ["b"] * 3,
                          "prediction": ["One. Two.", "One.", "One. Two. Three.", "One.", "One. Two.", "A. B. C. D."]})
    settings = JudgeSettings(base_url=server.url, model="judge", api_key="sk-levels", timeout=5.0, retries=1)
    db = tmp_path / "levels.duckdb"
    wide = score(frame, [definition], judge=settings, store=Store(db))
    run_id = wide.attrs["run_id"]
    # another program, without the definition: the run's stored one (levels: []) is used by every reader
    script = (
        "import sys\nfrom textgen_core.cli.main import main\n"
        f"db, run = {str(db)!r}, {str(run_id)!r}\n"
        "for args in (['summary', run], ['compare', run, '--baseline', 'a', '--resamples', '200'],\n"
        f"             ['export', run, '--out', {str(tmp_path / 'out.csv')!r}],\n"
        f"             ['resume', run, '--judge-base-url', {server.url!r}, '--judge-model', 'judge']):\n"
        "    code = main(['--db', db, *args])\n"
        "    print('EXIT', args[0], code, flush=True)\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TEXTGEN_EVAL_JUDGE_API_KEY": "sk-levels"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=280)
    assert "Traceback" not in done.stderr, done.stderr
    for command in ("summary", "compare", "export", "resume"):
        assert f"EXIT {command} 0" in done.stdout, done.stdout + done.stderr
    assert "conciseness" in done.stdout
    exported = pd.read_csv(tmp_path / "out.csv")
    assert len(exported) == 6 and "conciseness" in exported.columns


def test_an_input_column_the_file_lacks_is_a_preflight_error(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "tickets.csv"
    pd.DataFrame({"id": ["1", "2"], "model": ["m", "m"], "prediction": ["Hi.", "Hello."],
                  "channel": ["chat", "mail"]}).to_csv(data, index=False)
    for inputs, words in ((["prediction", "chanel"], "input 'chanel' of its definition is not a column"),
                          (["prediction", "id"], "mapped as the datum's id or model"),
                          (["model"], "mapped as the datum's id or model")):
        rubric = tmp_path / "rubric.toml"
        rubric.write_text(f'name = "tone_check"\ninputs = {inputs!r}\n{YES_NO}'.replace("'", '"'))
        args = _run(tmp_path, "tone_check", rubric)
        args[1] = str(data)
        err = _refused(tmp_path, capsys, args)
        assert "cannot run these metrics on this dataset" in err and words in err, err
    rubric.write_text(f'name = "tone_check"\ninputs = ["prediction", "channel"]\n{YES_NO}')
    args = _run(tmp_path, "tone_check", rubric, extra=("--dry-run", "--no-probe"))
    args[1] = str(data)
    assert main(args) == 0, capsys.readouterr()  # the column is there: the preflight passes
