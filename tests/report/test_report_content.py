"""What a report holds of a run too large to show whole, its rows' texts and reasons, and the command's bad inputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from textgen_core.cli.main import main
from textgen_core.evaluate import evaluate
from textgen_core.model import Dataset, Datum
from textgen_core.report import ReportOptions, build_report, compare_option, report_text
from textgen_core.report.datums import TEXT_LIMIT, datum_section
from textgen_core.report.markup import Markup, esc, tag
from textgen_core.store import Store

METRICS = ["token_f1", "wer", "lengths"]


def _rows(n: int) -> list[Datum]:
    rows = []
    for i in range(n):
        for model in ("m1", "m2"):
            words = " ".join(f"w{(i * 7 + k) % 11}" for k in range(1 + (i + len(model) * 3) % 6))
            refs = () if i == 4 else (" ".join(f"w{k}" for k in range(1 + i % 5)),)  # datum 4: nothing to score against
            prediction = "x" * (TEXT_LIMIT + 3000) if (i, model) == (2, "m1") else words
            rows.append(Datum(f"d{i:02d}", model, query=f"question {i}", prediction=prediction, references=refs,
                              metadata={"domain": ("news", "law", "code")[i % 3]}))
    return rows


@pytest.fixture(scope="module")
def lexical(tmp_path_factory: pytest.TempPathFactory) -> tuple[Store, int, Path]:
    folder = tmp_path_factory.mktemp("lexical")
    store = Store(folder / "lex.duckdb")
    run_id = evaluate(store, store.save_dataset(Dataset("lex", _rows(40), metadata_columns=("domain",))), METRICS,
                      workers=1)
    return store, run_id, folder


def test_a_large_run_shows_its_worst_best_and_a_sample_and_says_so(lexical) -> None:
    store, run_id, _ = lexical
    run = store.get_run(run_id)
    section = datum_section(store, run_id, run, ["f1", "wer"], whole_limit=10, extremes=3, sample_datums=5)
    assert section["mode"] == "selection" and section["total_rows"] == 80
    assert "more than the 10 a report holds whole" in section["note"]
    cells = store.scores(run_id).dropna(subset=["value"])
    shown = {(r["datum_id"], r["model"]): r for r in section["rows"]}
    for score, worst_first in (("f1", True), ("wer", False)):  # wer: lower is better, its worst are highest
        mine = cells[cells["score"] == score].sort_values(["value", "datum_id", "model"])
        worst = mine.head(3) if worst_first else mine.sort_values(
            ["value", "datum_id", "model"], ascending=[False, True, True]).head(3)
        tagged = [k for k, r in shown.items() if f"worst {score}" in r["shown_as"]]
        assert sorted(tagged) == sorted(zip(worst["datum_id"], worst["model"]))
        for key in tagged:
            assert shown[key]["scores"][score]["value"] == float(
                mine.set_index(["datum_id", "model"]).loc[key, "value"])
        assert len([k for k, r in shown.items() if f"best {score}" in r["shown_as"]]) == 3
    sampled = [k for k, r in shown.items() if "sample" in r["shown_as"]]
    datums = {d for d, _ in sampled}
    assert len(datums) == 5 and sorted(sampled) == sorted((d, m) for d in datums for m in ("m1", "m2"))
    # the same pick every time
    again = datum_section(store, run_id, run, ["f1", "wer"], whole_limit=10, extremes=3, sample_datums=5)
    assert [r["datum_id"] for r in again["rows"]] == [r["datum_id"] for r in section["rows"]]


def test_rows_carry_unscored_reasons_cut_texts_and_every_score(lexical) -> None:
    store, run_id, _ = lexical
    report = build_report(store, run_id)
    rows = {(r["datum_id"], r["model"]): r for r in report["datums"]["rows"]}
    assert report["datums"]["mode"] == "all" and len(rows) == 80
    stored = store.scores(run_id)
    unscored = stored[stored["value"].isna()]
    assert not unscored.empty
    for cell in unscored.itertuples():
        mine = rows[(cell.datum_id, cell.model)]["scores"][cell.score]
        assert mine["value"] is None and mine["reason"] == cell.reason
    long = rows[("d02", "m1")]["prediction"]
    assert long.startswith("x" * TEXT_LIMIT) and long.endswith("[3000 more characters left out of the report]")
    summary = {(r["model"], r["score"]): r for r in report["summary"]["rows"]}
    assert summary[("m1", "f1")]["n_unscored"] == len(unscored[(unscored["model"] == "m1")
                                                                      & (unscored["score"] == "f1")])
    html = report_text(report)
    assert "why unscored" in html and "This run has no scores" not in html


def test_a_run_without_scores_says_so(tmp_path: Path) -> None:
    store = Store(tmp_path / "empty.duckdb")
    dataset = store.save_dataset(Dataset("e", [Datum("a", "m", prediction="p", references=("r",))]))
    run_id = store.create_run(dataset, ["token_f1"], {}, {}, ["m"])
    html = report_text(build_report(store, run_id))
    assert "This run has no scores." in html


def test_cli_writes_html_and_json_and_refuses_bad_input_clearly(lexical, capsys) -> None:
    store, run_id, folder = lexical
    db = store.path
    assert main(["--db", db, "report", str(run_id), "--compare", "m1", "--out", str(folder / "r.json")]) == 0
    data = json.loads((folder / "r.json").read_text(encoding="utf-8"))
    assert data["comparison"]["candidates"] == ["m2"] and data["comparison"]["rows"]
    assert main(["--db", db, "report", str(run_id), "--out", str(folder / "r.html")]) == 0
    assert (folder / "r.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    capsys.readouterr()
    for argv, message in (
            (["report", "99", "--out", str(folder / "x.html")], "no run with id 99"),
            (["report", str(run_id), "--compare", "m1,,m2", "--out", str(folder / "x.html")], "BASELINE[,CANDIDATE"),
            (["report", str(run_id), "--compare", "nobody", "--out", str(folder / "x.html")], "nobody"),
            (["report", str(run_id), "--out", str(folder)], "cannot write"),
    ):
        assert main(["--db", db, *argv]) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith("error: ") and message in err and "Traceback" not in err
    assert not (folder / "x.html").exists()


def test_compare_option() -> None:
    assert compare_option("a") == ("a", None)
    assert compare_option(" a , b,c ") == ("a", ("b", "c"))
    for bad in ("", ",b", "a,"):
        with pytest.raises(Exception, match="BASELINE"):
            compare_option(bad)


def test_markup_escapes_data_and_refuses_what_could_run() -> None:
    assert esc("<b onclick='x'>&") == "&lt;b onclick=&#x27;x&#x27;&gt;&amp;"
    assert tag("td", "<script>", title='"x" onmouseover=1') == (
        '<td title="&quot;x&quot; onmouseover=1">&lt;script&gt;</td>')
    assert tag("p", Markup("<b>kept</b>"), "<i>") == "<p><b>kept</b>&lt;i&gt;</p>"
    for element in ("script", "a", "img", "iframe", "style", "p onclick"):
        with pytest.raises(ValueError):
            tag(element, "x")
    for attribute in ("onclick", "href", "src", "style", "onerror"):
        with pytest.raises(ValueError):
            tag("p", "x", **{attribute: "1"})


def test_secrets_come_from_the_environment_and_panel_variables(monkeypatch) -> None:
    from textgen_core.report import secrets_of

    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-one")
    monkeypatch.setenv("MEMBER_KEY", "sk-member-two")
    run = {"judge": {"jury": {"members": [{"model": "x", "api_key_env": "MEMBER_KEY"}]}}}
    assert set(secrets_of(run, ["typed-key"])) >= {"sk-env-one", "sk-member-two", "typed-key"}


def test_a_typed_key_is_scrubbed_from_the_report(lexical) -> None:
    store, run_id, _ = lexical
    report = build_report(store, run_id, ReportOptions(secrets=("question 1",)))  # any text can be named a secret
    text = json.dumps(report)
    assert "question 1" not in text and "[redacted]" in text


def _plain(value: float) -> float | None:
    """A number as the report's JSON holds it (NaN: null)."""
    return None if value != value else value


def test_slices_are_the_library_slice_summary_and_comparison(lexical) -> None:
    from textgen_core.compare.slices import compare_by, summary_by

    store, run_id, _ = lexical
    report = build_report(store, run_id, ReportOptions(baseline="m1", by="domain"))
    part = report["slices"]
    means = summary_by(store, run_id, "domain")
    assert part["slices"] == list(means.attrs["slices"]) and len(part["means"]) == len(means) > 0
    for mine, row in zip(part["means"], means.itertuples()):
        assert (mine["slice"], mine["model"], mine["score"], mine["n_scored"], mine["mean"]) == (
            row.slice, row.model, row.score, row.n_scored, row.mean)
        assert (mine["ci_low"], mine["ci_high"]) == (_plain(row.ci_low), _plain(row.ci_high))
    frame = compare_by(store, run_id, "m1", "domain", scores=list(dict.fromkeys(means["score"])))
    assert part["comparison"]["family"] == frame.attrs["family"]
    for mine, row in zip(part["comparison"]["rows"], frame.itertuples()):
        assert (mine["slice"], mine["score"], mine["delta"], mine["p_adjusted"], mine["verdict"]) == (
            row.slice, row.score, _plain(row.delta), _plain(row.p_adjusted), row.verdict)
    html = report_text(report)
    assert "Slices by domain" in html and 'class="slice-comparison"' in html


def test_an_unknown_slice_column_is_one_clear_error(lexical, capsys) -> None:
    store, run_id, folder = lexical
    assert main(["--db", store.path, "report", str(run_id), "--by", "nope", "--out", str(folder / "s.html")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "nope" in err and "domain" in err and "Traceback" not in err


def test_the_dataset_version_and_the_run_name_tags_and_note_are_said(tmp_path: Path) -> None:
    store = Store(tmp_path / "named.duckdb")
    rows = [Datum(f"d{i}", m, prediction=f"w{i}", references=("w1",)) for i in range(5) for m in ("a", "b")]
    run_id = evaluate(store, store.save_dataset(Dataset("fam", rows)), ["token_f1"], workers=1)
    store.run_names.label_run(run_id, name="nightly <b>", add_tags=["t1"], note="a <i>note</i>")
    report = build_report(store, run_id)
    assert report["run"]["dataset"] == {"id": 1, "name": "fam", "family": "fam", "version": 1,
                                        "run_name": "nightly <b>", "run_tags": ["t1"], "run_note": "a <i>note</i>"}
    html = report_text(report)
    assert "fam, version 1" in html and "nightly &lt;b&gt;" in html and "a &lt;i&gt;note&lt;/i&gt;" in html
