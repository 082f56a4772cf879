"""Every export path writes CSV that spreadsheets read back row for row, with no live formula,
and JSON Lines with exact floats."""

from __future__ import annotations

import csv
import io
import json

import pandas as pd
import pytest

from textgen_core.cli.main import main
from textgen_core.export import FORMULA_PREFIXES, neutralize, write_table

# Hostile text for every column: bare CR, CRLF, LF, formulas at the start and after each kind of break.
HOSTILE = ["=1+1", "a\rb=2", "x\r=cmd|' /C calc'!A0", "line1\r\n+SUM(A1)", "first\n@import", "\t=tab", "\r=cr",
           "-2+3", "plain, with comma", 'say "hi"', "ok"]


def _live_formulas(fields: list[str]) -> list[str]:
    """Fields with a formula prefix at their start or after a line break."""
    live = []
    for field in fields:
        lines = field.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        if any(line.startswith(FORMULA_PREFIXES) for line in lines):
            live.append(field)
    return live


def _read(path) -> str:
    with open(path, encoding="utf-8", newline="") as stream:  # keep bare CRs as they are
        return stream.read()


def _parse(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def _hostile_frame() -> pd.DataFrame:
    n = len(HOSTILE)
    return pd.DataFrame({
        "=id": HOSTILE, "model\r=x": HOSTILE[::-1], "reason": HOSTILE, "value": [0.1 + 0.2] * n,
        "n": list(range(n)), "flag": [True, False] * (n // 2) + [True] * (n % 2),
    })


@pytest.mark.parametrize("text", HOSTILE)
def test_neutralize_leaves_no_line_starting_with_a_formula(text: str) -> None:
    assert not _live_formulas([neutralize(text)])


def test_csv_round_trips_row_count_with_no_live_formula(tmp_path) -> None:
    frame = _hostile_frame()
    path = write_table(frame, tmp_path / "hostile.csv")
    records = _parse(_read(path))
    assert len(records) == len(frame) + 1
    assert all(len(r) == frame.shape[1] for r in records)
    assert not _live_formulas([f for r in records for f in r])
    header = records[0]
    assert header[0] == "'=id" and header[1] == "model\r'=x"
    # pandas (the C parser) agrees on the shape
    assert pd.read_csv(path, dtype=str, keep_default_na=False).shape == frame.shape
    assert records[1][3] == repr(0.1 + 0.2)  # full precision in CSV too


def test_jsonl_keeps_full_float_precision(tmp_path) -> None:
    values = [0.1 + 0.2, 1 / 3, 2.0 ** -40, 123456789.123456789, float("nan")]
    path = write_table(pd.DataFrame({"id": list("abcde"), "value": values}), tmp_path / "x.jsonl")
    back = [json.loads(line) for line in _read(path).splitlines()]
    assert [r["value"] for r in back[:4]] == values[:4]
    assert back[4]["value"] is None


def _hostile_dataset(path) -> None:
    rows = []
    for i, text in enumerate(HOSTILE):
        rows.append({"id": f"{text}#{i}", "model": "=m1" if i % 2 else "m\r@2", "question": text,
                     "answer": text, "reference": "ok"})
    with path.open("w", encoding="utf-8", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=list(rows[0]), lineterminator="\r\n")
        writer.writeheader()
        writer.writerows(rows)


def test_cli_run_out_and_export_are_safe(tmp_path, capsys) -> None:
    source, db = tmp_path / "hostile.csv", tmp_path / "t.duckdb"
    _hostile_dataset(source)
    wide = tmp_path / "wide.csv"
    assert main(["--db", str(db), "run", str(source), "--metrics", "exact_match", "--out", str(wide)]) == 0
    long, jsonl = tmp_path / "long.csv", tmp_path / "long.jsonl"
    assert main(["--db", str(db), "export", "1", "--out", str(long), "--long", "--verdicts", str(tmp_path / "v.csv")]) == 0
    assert main(["--db", str(db), "export", "1", "--out", str(jsonl), "--long"]) == 0
    for path in (wide, long):
        records = _parse(_read(path))
        assert len(records) == len(HOSTILE) + 1, path.name
        assert not _live_formulas([f for r in records for f in r]), path.name
    ids = {json.loads(line)["datum_id"] for line in jsonl.read_text(encoding="utf-8").splitlines()}
    assert ids == {f"{text}#{i}".strip() for i, text in enumerate(HOSTILE)}  # JSON keeps the (stripped) ids


def test_dashboard_download_uses_the_same_writer(app_db, tmp_path) -> None:
    from app_helpers import store

    from textgen_core.datasets import load_dataset
    from textgen_core.evaluate import evaluate
    from textgen_dashboard import data

    source = tmp_path / "hostile.csv"
    _hostile_dataset(source)
    db = store()
    run_id = evaluate(db, db.save_dataset(load_dataset(source)), ["exact_match"], workers=1)
    data.refresh()
    for table in ("scores_wide", "scores_long"):
        records = _parse(data.export_bytes(run_id, table, "csv").decode("utf-8"))
        assert len(records) == len(HOSTILE) + 1
        assert not _live_formulas([f for r in records for f in r])
