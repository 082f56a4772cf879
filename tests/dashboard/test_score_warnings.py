"""A judge that never varies, and a score with too few human labels, are said wherever the score is shown
(textgen_dashboard/score_warnings.py): Results, Compare, Explore's score list and datum, the calibrated card; each
warning links to the Label page with the run and the score in its address, never to a command line."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_helpers import no_exception, page, store

from textgen_core.compare.labels import import_labels
from textgen_core.compare.small_sample import MIN_LABELS
from textgen_core.datasets import load_dataset
from textgen_core.evaluate import evaluate
from textgen_core.judge.settings import JudgeSettings
from textgen_dashboard import data
from textgen_dashboard.score_warnings import CONSTANT, FEW_LABELS, REASONS, few_labels, parse

ROWS = "".join(f"q{i},{m},Question {i}?,{'Answer ' + str(i) if m == 'a' else 'I do not know'}.,Answer {i}\n"
               for i in range(8) for m in ("a", "b"))
PAYLOAD = ("id,model,question,answer,reference\n" + ROWS).encode()


@pytest.fixture
def constant_run(app_db: Path, judge_server, tmp_path: Path) -> int:
    """qa_grade from a judge that gives every cell the same grade (the server's schema default), and 3 labels."""
    db = store()
    run_id = evaluate(db, db.save_dataset(load_dataset(PAYLOAD, file_name="c.csv", name="c")), ["qa_grade"],
                      judge=JudgeSettings(base_url=judge_server.url, model="same-every-time"), workers=1)
    assert db.scores(run_id)["value"].nunique() == 1
    labels = tmp_path / "labels.csv"
    labels.write_text("id,model,value\nq0,a,1\nq0,b,0\nq1,a,1\n", encoding="utf-8")
    import_labels(db, run_id, labels, "qa_grade", annotator="ana")
    data.refresh()
    return run_id


def _alerts(at) -> list[str]:
    return [w.value.replace("\\", "") for w in at.warning]


def _app(view: str, query: dict[str, str]):
    at = page("app.py")
    for name, value in query.items():
        at.query_params[name] = value
    at.run()
    return at.switch_page(f"views/{view}.py").run()


@pytest.mark.parametrize("view", ["results", "compare", "explore"])
def test_every_page_showing_the_score_warns_and_links_to_the_label_page(constant_run, view):
    query = {"run": str(constant_run), "score": "qa_grade", "datum": "q0"}
    at = _app(view, query)
    no_exception(at)
    alerts = _alerts(at)
    assert any("do not vary" in a for a in alerts), alerts
    assert any("human label" in a and "3" in a for a in alerts), alerts
    assert not any("textgen-eval" in a for a in alerts), alerts  # a page, not a command line
    links = [(link.proto.label, link.proto.query_string) for link in at.get("page_link")]
    label_links = [q for label, q in links if label.startswith("Label cells of qa_grade")]
    assert label_links and all(f"run={constant_run}" in q and "score=qa_grade" in q for q in label_links), links


def test_the_calibrated_card_says_too_few_labels_with_its_link(constant_run):
    at = _app("results", {"run": str(constant_run)})
    alerts = _alerts(at)
    notes = [a for a in alerts if f"at least {MIN_LABELS}" in a]
    assert len(notes) >= 2, alerts  # the run's warning and the calibrated card's note
    links = [link.proto.label for link in at.get("page_link")]
    assert links.count("Label cells of qa_grade in run " + str(constant_run)) >= 2, links


def test_a_varied_judge_without_labels_says_nothing(app_db, judge_server):
    from scripted_judge import ScriptedJudge

    judge_server.responder = ScriptedJudge()
    db = store()
    run_id = evaluate(db, db.save_dataset(load_dataset(PAYLOAD, file_name="c.csv", name="c")), ["qa_grade"],
                      judge=JudgeSettings(base_url=judge_server.url, model="reads"), workers=1)
    assert db.scores(run_id)["value"].nunique() > 1
    data.refresh()
    at = _app("results", {"run": str(run_id)})
    assert not [a for a in _alerts(at) if "do not vary" in a or "human label" in a]


@pytest.mark.parametrize(("text", "score", "kind"), [
    ("qa_grade (0-1, higher is better): every one of the 9 scored cells (2 models) is 1; a judge whose verdicts "
     "do not vary cannot tell answers apart - check it against people (textgen-eval agreement).", "qa_grade", CONSTANT),
    ("custom.support_tone: 9 of the judge's 9 reasons are one word or empty", "custom.support_tone", REASONS),
    ("qa_grade: only 3 human label(s); at least 10 are needed", "qa_grade", FEW_LABELS),
])
def test_library_warnings_are_read_for_their_score_and_kind(text, score, kind):
    warning = parse(text)
    assert (warning.score, warning.kind) == (score, kind)
    assert "textgen-eval" not in warning.text


def test_few_labels_starts_at_one_and_stops_at_the_minimum():
    said = few_labels({"a": 0, "b": 1, "c": MIN_LABELS - 1, "d": MIN_LABELS})
    assert [w.score for w in said] == ["b", "c"] and "1 human label;" in said[0].text
