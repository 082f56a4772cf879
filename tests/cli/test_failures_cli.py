"""`textgen-eval failures RUN`: modes with rates and a flagged comparison; a second call reads the stored modes;
bad input is one clear message."""

from __future__ import annotations

import re
import time

import numpy as np
import pytest

from planted_failures import draw, planted_rates, write_run
from textgen_core.cli.main import main
from textgen_core.store import Store


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory):
    db = tmp_path_factory.mktemp("cli") / "f.duckdb"
    store = Store(db)
    rng = np.random.default_rng(3)
    run = write_run(store, 500, draw(500, planted_rates(0.1, "date"), rng), rng)
    few_rng = np.random.default_rng(4)
    few = write_run(store, 20, draw(20, planted_rates(0.1, None), few_rng), few_rng, unscored=10)
    return db, run.run_id, few.run_id


def test_modes_rates_and_the_flagged_mode(planted, capsys) -> None:
    db, run_id, _ = planted
    assert main(["--db", str(db), "failures", str(run_id), "--models", "base,cand"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"run \d+: \d+ failing judgement\(s\) in qa_grade, 5 mode\(s\)", out), out
    assert out.count("FLAGGED") == 1, out
    flagged = next(line for line in out.splitlines() if "FLAGGED" in line)
    assert "date" in flagged.split(":")[0], flagged
    assert "grouped and stored" in out
    for model in ("base", "cand"):
        assert re.search(rf"  {model}: \d+\.\d% \[\d+\.\d%, \d+\.\d%\] of 500 scored cells", out)


def test_a_second_call_reads_the_stored_modes(planted, capsys) -> None:
    db, run_id, _ = planted
    assert main(["--db", str(db), "failures", str(run_id)]) == 0
    first = capsys.readouterr().out
    started = time.perf_counter()
    assert main(["--db", str(db), "failures", str(run_id)]) == 0
    second = capsys.readouterr().out
    assert time.perf_counter() - started < 10
    assert "read the stored modes" in second
    assert first.split("\n\n")[1:-1] == second.split("\n\n")[1:-1]  # the same modes, rates and examples


def test_by_a_metadata_column_unknown_is_one_clear_error(planted, capsys) -> None:
    db, run_id, _ = planted
    assert main(["--db", str(db), "failures", str(run_id), "--by", "topic"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --by 'topic': the run's dataset has no such metadata column; its metadata "
                          "columns: none"), err


def test_too_few_failing_judgements_say_so_and_store_nothing(planted, capsys) -> None:
    db, _, few = planted
    assert main(["--db", str(db), "failures", str(few)]) == 0
    out = capsys.readouterr().out
    assert re.search(rf"run {few} has \d+ failing judgement\(s\) in qa_grade; grouping needs at least 20 "
                     r"\(unscored cells are not failures\); nothing was stored", out), out
    assert Store(db, read_only=True).failures.failure_modes(few).empty


@pytest.mark.parametrize("argv, message", [
    (["failures", "999"], "no run with id 999"),
    (["failures", "{run}", "--models", "base"], "--models takes BASELINE,CANDIDATE"),
    (["failures", "{run}", "--models", "base,nobody"], "model(s) nobody not in the run"),
    (["failures", "{run}", "--score", "rouge1"], "run {run} has no score 'rouge1'; its scores: qa_grade"),
    (["failures", "{run}", "--lowest", "0.8"], "lowest must be a share above 0 and at most 0.5"),
    (["failures", "{run}", "--bottom", "0"], "bottom must be at least 1"),
    (["failures", "{run}", "--alpha", "2"], "--alpha must be between 0 and 1"),
])
def test_bad_input_is_one_message(planted, capsys, argv: list[str], message: str) -> None:
    db, run_id, _ = planted
    argv = [a.replace("{run}", str(run_id)) for a in argv]
    assert main(["--db", str(db), *argv]) == 2
    err = capsys.readouterr().err
    assert message.replace("{run}", str(run_id)) in err and "Traceback" not in err, err
