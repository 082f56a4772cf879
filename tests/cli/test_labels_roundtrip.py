"""`labels export` then `labels import` restores the same labels, scores and sampling (issue 34 point 11)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from textgen_core.cli.main import main
from textgen_core.model import Dataset, Datum
from textgen_core.store import Store

IDS = ["-1", "+x", "=SUM(A1)", "@home", "plain"]
COLUMNS = ["datum_id", "model", "score", "annotator", "value", "note", "sampling", "probability"]


def make_run(db: Path) -> int:
    """The same dataset and run in a fresh file: qa_grade (0/1) and coherence (1-5) for two models."""
    store = Store(db)
    rows = [Datum(i, m, "q", "p", ("r",)) for i in IDS for m in ("a", "-b")]
    dataset_id = store.save_dataset(Dataset("tricky", rows))
    run_id = store.create_run(dataset_id, ["qa_grade", "coherence"], {}, {}, ["a", "-b"])
    store.write_cells(run_id, [(i, m, s, s, v, None, None) for n, i in enumerate(IDS) for m in ("a", "-b")
                               for s, v in (("qa_grade", float(n % 2)), ("coherence", float(1 + n % 5)))])
    store.close()
    return run_id


LABELS = [
    ("-1", "a", "qa_grade", "@ana", 1.0, "=looks right", "stratified", 0.5),
    ("+x", "-b", "qa_grade", "@ana", 0.0, None, "random", None),
    ("=SUM(A1)", "a", "coherence", "ben", 4.0, "-2 for tone\n+1 for facts", "disagreement", None),
    ("@home", "-b", "coherence", "ben", 2.0, None, "weighted", 0.25),
    ("plain", "a", "coherence", "ben", 5.0, None, "import", None),
]


def labels_of(db: Path, run_id: int) -> pd.DataFrame:
    frame = Store(db, read_only=True).labels(run_id)[COLUMNS]
    return frame.sort_values(["datum_id", "model", "score"]).reset_index(drop=True)


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_export_then_import_restores_labels_scores_and_sampling(tmp_path: Path, capsys, suffix: str) -> None:
    source, target = tmp_path / "source.duckdb", tmp_path / "target.duckdb"
    run_id = make_run(source)
    assert make_run(target) == run_id
    store = Store(source)
    store.write_labels(run_id, LABELS)
    store.close()
    out = tmp_path / f"labels{suffix}"
    assert main(["--db", str(source), "labels", "export", str(run_id), "--out", str(out)]) == 0
    if suffix == ".csv":  # the file a spreadsheet opens safely: formula guards on, the probability column empty
        text = out.read_text(encoding="utf-8")
        assert "'-1," in text and "'=SUM(A1)" in text and "'@ana" in text
        assert pd.read_csv(out)["probability"].isna().sum() == 3
    capsys.readouterr()
    assert main(["--db", str(target), "labels", "import", str(run_id), str(out)]) == 0  # no --score needed
    said = capsys.readouterr().out
    assert "stored 5 label(s) (qa_grade 2, coherence 3)" in said and "stratified 1" in said
    expected = labels_of(source, run_id)
    got = labels_of(target, run_id)
    pd.testing.assert_frame_equal(got, expected, check_dtype=False)


def test_an_empty_probability_means_uniform_and_bad_cells_are_named(tmp_path: Path, capsys) -> None:
    db = tmp_path / "run.duckdb"
    run_id = make_run(db)
    path = tmp_path / "mine.csv"
    path.write_text("id,model,value,annotator,probability\nplain,a,1,ana,\n'-1,a,0,ana,0.5\n", encoding="utf-8")
    assert main(["--db", str(db), "labels", "import", str(run_id), str(path), "--score", "qa_grade"]) == 0
    stored = labels_of(db, run_id)
    assert stored[["datum_id", "sampling"]].values.tolist() == [["-1", "weighted"], ["plain", "import"]]
    assert stored["probability"].isna().tolist() == [False, True]
    bad = tmp_path / "bad.csv"
    bad.write_text("id,model,value,annotator,score,sampling\nplain,a,1,ana,qa_grade,guessed\n", encoding="utf-8")
    assert main(["--db", str(db), "labels", "import", str(run_id), str(bad)]) == 2
    err = capsys.readouterr().err
    assert "row 1, column 'sampling'" in err and "'guessed' is not a sampling" in err
    bad.write_text("id,model,value,annotator,score\nplain,a,1,ana,f1\n", encoding="utf-8")
    assert main(["--db", str(db), "labels", "import", str(run_id), str(bad)]) == 2
    assert "no score 'f1'" in capsys.readouterr().err
    bad.write_text("id,model,value,annotator\nplain,a,1,ana\n", encoding="utf-8")
    assert main(["--db", str(db), "labels", "import", str(run_id), str(bad)]) == 2
    assert "no score column" in capsys.readouterr().err
