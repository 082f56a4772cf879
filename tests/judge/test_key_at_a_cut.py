"""A judge that echoes the key where a text is cut short (#34.7): no 8 characters of the key survive.

The reply is not JSON, so the client quotes the start of it in the cell's reason -- cut at a fixed
length. The 164-character key starts just before that cut. Direct and batch mode, through the CLI
(``run`` then ``export --long``), against the loopback judge; the database file, the long export,
the exchanges and every log line are scanned for any 8-character piece of the key.
"""

from __future__ import annotations

import csv
import logging
from pathlib import Path

import pytest

from judge_server import JudgeServer
from textgen_core.cli.main import main
from textgen_core.store import Store

#: A project key as OpenAI issues them: ``sk-proj-`` and 156 more characters.
KEY = "sk-proj-" + "".join("AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-"[(i * 7) % 38] for i in range(156))
PIECE = 8


def pieces(text: str) -> list[str]:
    """Every run of :data:`PIECE` characters of the key found in ``text``."""
    return sorted({KEY[i:i + PIECE] for i in range(len(KEY) - PIECE + 1) if KEY[i:i + PIECE] in text})


ECHOED: list[int] = []


def echo(request: dict) -> str:
    ECHOED.append(1)
    # 62 characters, then the key: a reply quoted up to 80 characters ends inside it.
    return "I cannot grade this one; please check the settings I was given " + KEY + " and retry."


def write_outputs(path: Path) -> None:
    with path.open("w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["id", "model", "query", "prediction", "reference"])
        for i in range(3):
            out.writerow([f"d{i}", "m", f"Capital number {i}?", f"City {i}.", f"City {i}."])


@pytest.mark.parametrize("batch", [False, True], ids=["direct", "batch"])
def test_a_key_straddling_the_cut_leaves_no_piece_anywhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            caplog: pytest.LogCaptureFixture,
                                                            capsys: pytest.CaptureFixture, batch: bool) -> None:
    assert len(KEY) == 164
    data, db, long = tmp_path / "outputs.csv", tmp_path / "cut.duckdb", tmp_path / "long.csv"
    write_outputs(data)
    ECHOED.clear()
    monkeypatch.setenv("CUT_KEY", KEY)
    caplog.set_level(logging.DEBUG)
    with JudgeServer(responder=echo) as server:
        server.batches.delay = 0.02
        argv = ["--db", str(db), "run", str(data), "--metrics", "qa_grade", "--judge-base-url", server.url,
                "--judge-model", "judge", "--judge-api-key-env", "CUT_KEY", "--retries", "1", "--timeout", "5"]
        main(argv + (["--batch", "--batch-poll", "0.02", "--batch-settle", "0.1"] if batch else []))
    assert ECHOED  # the judge did echo the key
    assert main(["--db", str(db), "export", "1", "--out", str(long), "--long"]) == 0
    store = Store(db)
    try:
        reasons = store.scores(1)
        exchanges = store.exchanges(1)
    finally:
        store.close()
    shown = reasons.to_csv() + exchanges.to_csv()
    assert "reply" in shown and "[redacted]" in shown  # the reason and the reply are kept, the key is not
    printed = capsys.readouterr()
    seen = {"scores and exchanges": shown, "export --long": long.read_text(), "log": caplog.text,
            "stdout and stderr": printed.out + printed.err, "database file": db.read_bytes().decode("latin-1")}
    assert {where: pieces(text) for where, text in seen.items() if pieces(text)} == {}
