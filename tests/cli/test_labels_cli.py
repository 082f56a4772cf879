"""`textgen-eval labels import/export/plan`, `agreement` from labels and `compare --calibrate`, end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from textgen_core.cli.main import main
from textgen_core.compare.human_report import agreement_report, calibrated_means
from textgen_core.compare.labels import human_labels, select_cells
from textgen_core.model import Dataset, Datum
from textgen_core.store import Store

N = 60


@pytest.fixture
def judged(tmp_path: Path) -> tuple[Path, int, dict]:
    """Two models x 60 datums; qa_grade from a lenient judge (says 1 for a third of the wrong answers) and
    coherence 1-5; the truth kept for the labels; a human column 'rating' on half the rows."""
    rng = np.random.default_rng(4)
    rows, cells, truth = [], [], {}
    for i in range(N):
        for model, skill in (("small", 0.5), ("large", 0.8)):
            right = rng.random() < skill
            said = 1.0 if right or rng.random() < 0.33 else 0.0
            truth[(f"d{i}", model)] = 1.0 if right else 0.0
            meta = {"rating": int(right)} if i % 2 == 0 else {}
            rows.append(Datum(f"d{i}", model, "q", "p", ("r",), metadata=meta))
            cells.append((f"d{i}", model, "qa_grade", "qa_grade", said, None, None))
            cells.append((f"d{i}", model, "coherence", "coherence", float(rng.integers(1, 6)), None, None))
    db = tmp_path / "labels.duckdb"
    store = Store(db)
    dataset_id = store.save_dataset(Dataset("qa", rows, metadata_columns=("rating",)))
    run_id = store.create_run(dataset_id, ["qa_grade", "coherence"], {}, {}, ["small", "large"])
    store.write_cells(run_id, cells)
    store.close()
    return db, run_id, truth


def write_labels(path: Path, rows: list[dict]) -> Path:
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_import_export_round_trip_and_agreement(judged, tmp_path: Path, capsys) -> None:
    db, run_id, truth = judged
    store = Store(db)
    picked = select_cells(store, run_id, "qa_grade", "random", 40, seed=1)
    rows = [{"id": d, "model": m, "value": int(truth[(d, m)]), "annotator": "ana"}
            for d, m in zip(picked["datum_id"], picked["model"])]
    rows += [{"id": r["id"], "model": r["model"], "value": r["value"], "annotator": "ben"} for r in rows[:15]]
    source = write_labels(tmp_path / "labels.csv", rows)
    assert main(["--db", str(db), "labels", "import", str(run_id), str(source), "--score", "qa_grade",
                 "--sampling", "random"]) == 0
    assert "stored 55 label(s) of qa_grade" in capsys.readouterr().out
    out = tmp_path / "back.csv"
    assert main(["--db", str(db), "labels", "export", str(run_id), "--out", str(out)]) == 0
    back = pd.read_csv(out, dtype={"datum_id": str})
    assert len(back) == 55 and set(back["annotator"]) == {"ana", "ben"}
    assert list(back.columns[:5]) == ["datum_id", "model", "score", "value", "annotator"]  # the key of every export
    assert sorted(zip(back["datum_id"], back["model"], back["value"])) == sorted(
        (r["id"], r["model"], r["value"]) for r in rows)

    assert main(["--db", str(db), "agreement", str(run_id)]) == 0
    printed = capsys.readouterr().out
    assert "qa_grade (0-1, higher is better; binary): judge against 2 annotator(s)" in printed
    assert "Krippendorff's alpha 1.0000" in printed  # ana and ben agree on the 15 cells both labelled
    assert "Bias-corrected means (PPI++)" in printed

    report = agreement_report(Store(db, read_only=True), run_id, "qa_grade")
    cells = report.table.set_index("model")
    labelled = [(d, m) for d, m in zip(picked["datum_id"], picked["model"])]
    judge = pd.DataFrame(Store(db, read_only=True).score_values(run_id, scores=["qa_grade"]))
    judge = {(d, m): v for d, m, v in zip(judge["datum_id"], judge["model"], judge["value"])}
    expected = cohen_kappa_score([judge[c] for c in labelled], [truth[c] for c in labelled], labels=[0.0, 1.0])
    assert cells.loc["all models", "kappa"] == pytest.approx(expected, abs=1e-12)
    assert cells.loc["all models", "kappa_low"] <= cells.loc["all models", "kappa"] <= cells.loc[
        "all models", "kappa_high"]
    confusion = report.confusion
    assert list(confusion.index) == [0.0, 1.0] and list(confusion.columns) == [0.0, 1.0]
    assert int(confusion.to_numpy().sum()) == 40 and confusion.loc[0.0, 1.0] == 0  # the judge is never too strict
    # the lenient judge says 1 where people say 0: those are the disagreements, largest first
    assert (report.disagreements["judge"] == 1.0).all() and (report.disagreements["human"] == 0.0).all()


def test_a_bad_labels_file_stores_nothing_and_names_the_cell(judged, tmp_path: Path, capsys) -> None:
    db, run_id, _ = judged
    cases = [
        ([{"id": "d0", "model": "small", "value": 1, "annotator": "a"},
          {"id": "d1", "model": "small", "value": 3, "annotator": "a"}], "row 2, column 'value'", "not a value of"),
        ([{"id": "d0", "model": "small", "value": "yes", "annotator": "a"}], "row 1, column 'value'", "'yes'"),
        ([{"id": "nope", "model": "small", "value": 1, "annotator": "a"}], "row 1, column 'id'", "no datum"),
        ([{"id": "d0", "model": "tiny", "value": 1, "annotator": "a"}], "row 1, column 'model'", "no datum"),
        ([{"id": "d0", "model": "small", "value": 1}], "no annotator column", ""),
        ([{"id": "d0", "model": "small", "value": 1, "annotator": "a"},
          {"id": "d0", "model": "small", "value": 0, "annotator": "a"}], "row 2, column 'id'", "twice by 'a'"),
        ([{"id": "d0", "value": 1, "annotator": "a"}], "missing column(s) model", ""),
    ]
    for i, (rows, where, what) in enumerate(cases):
        path = write_labels(tmp_path / f"bad{i}.csv", rows)
        assert main(["--db", str(db), "labels", "import", str(run_id), str(path), "--score", "qa_grade"]) == 2
        err = capsys.readouterr().err
        assert where in err and what in err and f"bad{i}.csv" in err and "Traceback" not in err
    assert Store(db, read_only=True).labels(run_id).empty
    code = main(["--db", str(db), "labels", "import", str(run_id), str(tmp_path / "bad0.csv"), "--score", "bleu"])
    assert code == 2 and "no score 'bleu'" in capsys.readouterr().err


def test_a_human_column_counts_as_labels(judged, capsys) -> None:
    db, run_id, truth = judged
    store = Store(db, read_only=True)
    labels = human_labels(store, run_id, "qa_grade", "rating")
    assert len(labels) == N and set(labels["annotator"]) == {"column:rating"}  # half the datums, both models
    means = calibrated_means(store, run_id, ["qa_grade"], human_column="rating").set_index("model")
    for model in ("small", "large"):
        judge_mean = means.loc[model, "judge_mean"]
        assert means.loc[model, "calibrated"] < judge_mean  # the lenient judge is corrected downwards
        assert means.loc[model, "n_labels"] == N // 2
    assert main(["--db", str(db), "agreement", str(run_id), "--human-column", "rating", "--labels",
                 "--scores", "qa_grade"]) == 0
    assert "judge against 1 annotator(s)" in capsys.readouterr().out


def test_compare_calibrate_and_the_planner(judged, tmp_path: Path, capsys) -> None:
    db, run_id, truth = judged
    assert main(["--db", str(db), "compare", str(run_id), "--baseline", "small", "--scores", "qa_grade",
                 "--resamples", "200", "--calibrate", "--human-column", "rating"]) == 0
    printed = capsys.readouterr().out
    assert "Bias-corrected paired differences" in printed and "calibrated delta" in printed
    assert "Bias-corrected means beside the judge-only means" in printed
    assert main(["--db", str(db), "compare", str(run_id), "--baseline", "small", "--scores", "coherence",
                 "--resamples", "200", "--calibrate"]) == 0
    assert "no score of this comparison has human labels yet" in capsys.readouterr().out
    assert main(["--db", str(db), "labels", "plan", str(run_id), "--score", "qa_grade", "--width", "0.05",
                 "--human-column", "rating"]) == 0
    plan = capsys.readouterr().out
    assert "labels needed" in plan and "small" in plan and "NaN" not in plan and "nan" not in plan


def test_disagreement_first_labels_get_no_plain_estimate(judged, tmp_path: Path, capsys) -> None:
    db, run_id, truth = judged
    store = Store(db)
    picked = select_cells(store, run_id, "coherence", "disagreement", 10)
    assert picked["probability"].isna().all()
    assert (picked["judge"] == 3.0).all()  # nearest the middle of 1-5 first
    store.write_labels(run_id, [(d, m, "coherence", "ana", 3.0, None, "disagreement", None)
                                for d, m in zip(picked["datum_id"], picked["model"])])
    after = select_cells(store, run_id, "coherence", "disagreement", 10, viewer="ana")
    assert after.equals(picked)  # ana's own labels do not reorder her queue
    store.write_labels(run_id, [(d, m, "coherence", "ben", 1.0, None, "disagreement", None)
                                for d, m in zip(picked["datum_id"][5:], picked["model"][5:])])
    second = select_cells(store, run_id, "coherence", "disagreement", 10, viewer="cy")
    assert set(zip(second["datum_id"][:5], second["model"][:5])) == set(
        zip(picked["datum_id"][5:], picked["model"][5:]))  # where people split, first
    means = calibrated_means(store, run_id, ["coherence"])
    assert means["calibrated"].isna().all()
    assert means["note"].str.contains("not sampled at random").all()


def test_labels_go_with_their_run_and_an_old_file_has_none(judged, tmp_path: Path) -> None:
    db, run_id, _ = judged
    store = Store(db)
    store.write_labels(run_id, [("d0", "small", "qa_grade", "ana", 1.0, None, "random", None),
                                ("d0", "small", "qa_grade", "ana", 0.0, "changed my mind", "random", None)])
    kept = store.labels(run_id)
    assert kept[["value", "note"]].values.tolist() == [[0.0, "changed my mind"]]  # the later label wins
    store.delete_run(run_id, force=True)  # the fixture's run was never finished
    assert store.labels(run_id).empty
    store.close()
    import duckdb

    old = tmp_path / "old.duckdb"  # a file from before labels existed, opened read-only: no table, no labels
    with duckdb.connect(str(old)) as con:
        con.execute("CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
    assert Store(old, read_only=True).labels(1).empty


def test_run_calibrate_takes_a_human_column(tmp_path: Path, capsys) -> None:
    rows = ["id,model,question,answer,reference,stars"]
    for i in range(12):
        rows.append(f"q{i},a,what is {i}?,{i},{i},{1.0 if i % 3 else 0.0}")
    source = tmp_path / "stars.csv"
    source.write_text("\n".join(rows) + "\n", encoding="utf-8")
    db = tmp_path / "run.duckdb"
    assert main(["--db", str(db), "run", str(source), "--metrics", "exact_match", "--workers", "1",
                 "--calibrate", "exact_match=stars"]) == 0
    printed = capsys.readouterr().out
    assert "Bias-corrected means (PPI++, the human column as labels)" in printed
    means = calibrated_means(Store(db, read_only=True), 1, ["exact_match"], human_column="stars")
    assert means["calibrated"].iloc[0] == pytest.approx(8 / 12)  # every answer matches; people said 8 of 12
    assert means["judge_mean"].iloc[0] == 1.0
    with pytest.raises(SystemExit) as stopped:  # refused before anything is stored
        main(["--db", str(db), "run", str(source), "--metrics", "exact_match", "--name", "again",
              "--calibrate", "exact_match"])
    assert stopped.value.code == 2 and "SCORE=COLUMN" in capsys.readouterr().err
    assert len(Store(db, read_only=True).list_runs()) == 1


def test_calibrated_numbers_equal_ppi_on_the_stored_cells(judged) -> None:
    """Stratified labels are weighted by their stratum's labelled share; paired deltas are PPI++ on differences."""
    from textgen_core.compare.calibration import ppi_mean
    from textgen_core.compare.human_report import calibrated_deltas

    db, run_id, truth = judged
    store = Store(db)
    picked = select_cells(store, run_id, "qa_grade", "stratified", 30, seed=2)
    store.write_labels(run_id, [(d, m, "qa_grade", "ana", truth[(d, m)], None, "stratified", p)
                                for d, m, p in zip(picked["datum_id"], picked["model"], picked["probability"])])
    judge = store.score_values(run_id, scores=["qa_grade"])
    means = calibrated_means(store, run_id, ["qa_grade"]).set_index("model")
    for model in ("small", "large"):
        population = judge[judge["model"] == model]
        mine = picked[picked["model"] == model]
        sizes = population["value"].value_counts()
        taken = mine["judge"].value_counts()
        pi = np.array([taken[v] / sizes[v] for v in mine["judge"]])
        expected = ppi_mean(np.array([truth[(d, model)] for d in mine["datum_id"]]), mine["judge"].to_numpy(),
                            population["value"].to_numpy(), probabilities=pi)
        assert means.loc[model, "calibrated"] == pytest.approx(expected.estimate, abs=1e-12)
        assert means.loc[model, "ci_low"] == pytest.approx(expected.ci_low, abs=1e-12, nan_ok=True)
        assert means.loc[model, "method"] == expected.method
    # small: a weighted interval; large: its 13 labels all agree with the judge, so human - judge never varies
    assert means.loc["small", "method"] == "PPI++ with inverse-probability weights"
    assert means.loc["large", "method"] == "too few" and "do not vary" in means.loc["large", "note"]

    store.write_labels(run_id, [(f"d{i}", m, "qa_grade", "ben", truth[(f"d{i}", m)], None, "random", None)
                                for i in range(20) for m in ("small", "large")])
    # ana's stratified labels stay; the paired deltas use only datums whose labels are all random
    deltas = calibrated_deltas(store, run_id, "small", ["large"], ["qa_grade"]).iloc[0]
    wide = judge.pivot(index="datum_id", columns="model", values="value")
    diffs_all = (wide["large"] - wide["small"]).to_numpy()
    ids = [f"d{i}" for i in range(20)]
    random_pairs = [d for d in ids if not any((d, m) in set(zip(picked["datum_id"], picked["model"]))
                                              for m in ("small", "large"))]
    y = np.array([truth[(d, "large")] - truth[(d, "small")] for d in random_pairs])
    f = np.array([wide.loc[d, "large"] - wide.loc[d, "small"] for d in random_pairs])
    expected = ppi_mean(y, f, diffs_all, bounds=(-1.0, 1.0))
    assert deltas["n_labels"] == len(random_pairs) < 10
    assert deltas["calibrated_delta"] == pytest.approx(expected.estimate, abs=1e-12)
    assert np.isnan(deltas["ci_high"]) and np.isnan(expected.ci_high)  # too few labelled pairs for an interval
    assert f"{len(random_pairs)} labelled pairs; at least 10 are needed" in deltas["note"]
    assert "left out" in deltas["note"]


def test_imported_inclusion_probabilities_give_weighted_estimates(judged, tmp_path: Path, capsys) -> None:
    from textgen_core.compare.calibration import ppi_mean

    db, run_id, truth = judged
    store = Store(db)
    judge = store.score_values(run_id, scores=["qa_grade"])
    large = judge[judge["model"] == "large"].reset_index(drop=True)
    # cells the judge calls right are drawn with probability 0.5, the others with 0.9 (a design known in advance)
    pi = np.where(large["value"] == 1.0, 0.5, 0.9)
    drawn = np.random.default_rng(3).random(len(large)) < pi
    rows = [{"id": d, "model": "large", "value": truth[(d, "large")], "annotator": "ana", "probability": p}
            for d, p in zip(large["datum_id"][drawn], pi[drawn])]
    assert main(["--db", str(db), "labels", "import", str(run_id), str(write_labels(tmp_path / "w.csv", rows)),
                 "--score", "qa_grade"]) == 0
    stored = store.labels(run_id)
    assert set(stored["sampling"]) == {"weighted"} and stored["probability"].tolist() == pytest.approx(
        [r["probability"] for r in rows])
    means = calibrated_means(store, run_id, ["qa_grade"]).set_index("model")
    expected = ppi_mean(np.array([r["value"] for r in rows]), large["value"][drawn].to_numpy(),
                        large["value"].to_numpy(), probabilities=pi[drawn])
    assert means.loc["large", "calibrated"] == pytest.approx(expected.estimate, abs=1e-12)
    assert means.loc["large", "method"] == "PPI++ with inverse-probability weights"
    bad = write_labels(tmp_path / "p.csv", [{**rows[0], "probability": 0}])
    assert main(["--db", str(db), "labels", "import", str(run_id), str(bad), "--score", "qa_grade"]) == 2
    assert "row 1, column 'probability'" in capsys.readouterr().err
