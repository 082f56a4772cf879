"""`textgen-eval align` as a real process against the loopback judge with the planted refund blind spot."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "align"))
from refund_judge import CRITERION, RefundJudge, label_rows, people, rows  # noqa: E402

from judge_server import JudgeServer  # noqa: E402
from textgen_core.evaluate import evaluate  # noqa: E402
from textgen_core.judge import JudgeSettings  # noqa: E402
from textgen_core.judge.metrics.criteria import criterion, define  # noqa: E402
from textgen_core.model import Dataset  # noqa: E402
from textgen_core.store import Store  # noqa: E402


def _cli(db: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "textgen_core", "--db", str(db), *args], capture_output=True,
                          text=True, timeout=300, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(Path.cwd()),
                                                         "TEXTGEN_EVAL_JUDGE_API_KEY": "sk-test-align-cli-key"})


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    """The labelled run, judged once per module; each test gets its own copy of the file (`labelled`)."""
    judge = RefundJudge()
    with JudgeServer(responder=judge) as server:
        db = tmp_path_factory.mktemp("align") / "a.duckdb"
        store = Store(db)
        define(criterion(CRITERION))
        made = rows(80)
        dataset = store.save_dataset(Dataset("support", made), "support")
        run = evaluate(store, dataset, ["helpfulness"], judge=JudgeSettings(
            base_url=server.url, model="refund-judge", api_key="sk-test-align-cli", timeout=5.0), workers=1)
        store.write_labels(run, label_rows(made, people))
        store.close()
        yield db, run, server


@pytest.fixture
def labelled(scored, tmp_path):
    db, run, server = scored
    copy = tmp_path / db.name
    shutil.copyfile(db, copy)
    assert not db.with_name(db.name + ".wal").exists()  # the closed file holds everything
    return copy, run, server


def test_align_prints_the_split_the_candidates_the_figures_and_saves_the_accepted_version(labelled, cli_main):
    db, run, server = labelled
    before = server.count()
    # the dry run and the repeat run in this process; the aligning run is a real program of its own
    dry = cli_main("--db", db, "align", run, "--score", "helpfulness", "--dry-run",
                   env={"TEXTGEN_EVAL_JUDGE_API_KEY": "sk-test-align-cli-key"})
    assert dry.returncode == 0, dry.stderr
    assert "split with seed 0 into 56 training and 24 held-out cells" in dry.stdout
    assert "judge calls:" in dry.stdout and server.count() == before  # a dry run asks nothing
    done = _cli(db, "align", str(run), "--score", "helpfulness")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "the reflective call's prompt:" in out and "refund" in out
    assert "ACCEPTED" in out and "saved as helpfulness version 2" in out, out
    assert "Alternative Annotator Test" in out and "needs at least 3 annotators" in out
    assert "sk-test" not in out + done.stderr  # neither the run's key nor this one is printed
    again = cli_main("--db", db, "align", run, "--score", "helpfulness", "--no-accept")
    assert again.returncode == 0 and "judge calls made: 0" in again.stdout, again.stdout
    for path in (db, db.with_name(db.name + ".wal")):  # the key reaches no file
        assert not path.exists() or b"sk-test-align-cli-key" not in path.read_bytes()


def test_align_refuses_what_it_cannot_align_with_one_message(labelled, capsys):
    from textgen_core.cli.main import main

    db, run, _ = labelled
    for args, message in ((["--score", "nope"], "has no score 'nope'"),
                          (["--score", "helpfulness", "--holdout", "0.99"], "--holdout must be a share"),
                          (["--score", "helpfulness", "--samples", "3"], "--samples is not used here"),
                          (["--score", "helpfulness", "--labels-from", "99"], "no run with id 99")):
        code = main(["--db", str(db), "align", str(run), *args])
        err = capsys.readouterr().err
        assert code == 2, (args, err)
        assert message in err and "Traceback" not in err, err
