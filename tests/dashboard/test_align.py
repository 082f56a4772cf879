"""The Label page's "Improve this judge" section: candidates judged on held-out labels, saved only on a click;
through AppTest, and once in headless Chromium (screenshots kept in tmp)."""

from __future__ import annotations

import os
import re
import shutil
import sys
import time
from pathlib import Path

import pytest
from app_helpers import all_text, app_page, no_exception, store

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "align"))
from refund_judge import CRITERION, RefundJudge, label_rows, people, rows  # noqa: E402

from judge_server import JudgeServer  # noqa: E402
from textgen_core.evaluate import evaluate  # noqa: E402
from textgen_core.judge import JudgeSettings  # noqa: E402
from textgen_core.judge.metrics.criteria import criterion, define  # noqa: E402
from textgen_core.model import Dataset  # noqa: E402
from textgen_dashboard import data, state  # noqa: E402
from textgen_dashboard.state import ALIGN_ACCEPT, ALIGN_RUN  # noqa: E402

#: Milliseconds a browser step may wait: a loaded 2-core machine takes most of a minute to draw a page.
WAIT = 150_000


def _labelled(db, url: str, n: int = 60) -> int:
    define(criterion(CRITERION))
    made = rows(n)
    dataset = db.save_dataset(Dataset("support", made), "support")
    run = evaluate(db, dataset, ["helpfulness"], judge=JudgeSettings(
        base_url=url, model="refund-judge", api_key="sk-test-align-page", timeout=5.0), workers=1)
    db.write_labels(run, label_rows(made, people))
    return run


@pytest.fixture(scope="module")
def served():
    with JudgeServer(responder=RefundJudge()) as server:
        yield server


@pytest.fixture(scope="module")
def labelled_file(tmp_path_factory: pytest.TempPathFactory, served) -> tuple[Path, int]:
    """The labelled run, judged once for the module: (database file, run id). Each test works on a copy."""
    from textgen_core.store import Store

    path = tmp_path_factory.mktemp("align_page") / "labelled.duckdb"
    db = Store(path)
    run = _labelled(db, served.url)
    db.close()
    return path, run


def test_candidates_are_judged_and_nothing_is_saved_until_the_click(app_db, labelled_file, monkeypatch) -> None:
    monkeypatch.setenv("TEXTGEN_EVAL_JUDGE_API_KEY", "sk-test-align-page")
    define(criterion(CRITERION))
    shutil.copyfile(labelled_file[0], app_db)
    run = labelled_file[1]
    data.refresh()
    at = app_page("label")
    at.session_state[state.LABEL_RUN] = run
    at.session_state[state.LABEL_TAB] = "agreement"
    at.run()
    no_exception(at)
    text = all_text(at)
    assert "Improve this judge" in text and "42 to learn from, 18 held out" in text, text
    at.button(key=ALIGN_RUN).click().run()
    no_exception(at)
    shown = all_text(at)
    assert "Judge calls made:" in shown and "Alternative Annotator Test" in shown, shown
    assert [b.key for b in at.button if b.key.startswith(ALIGN_ACCEPT)], shown
    assert store().load_criterion("helpfulness") is None  # judged, not saved
    at.button(key=f"{ALIGN_ACCEPT}.0").click().run()
    no_exception(at)
    version, saved = store().load_criterion("helpfulness")
    assert "Saved helpfulness version" in all_text(at) and version == 2 and saved["examples"]
    assert int(store().alignments(run)["accepted_version"].dropna().iloc[0]) == 2


def test_an_aligned_version_opens_in_the_criteria_editor_with_its_examples() -> None:
    import tomllib

    from textgen_dashboard.criteria import to_toml

    made = criterion(CRITERION | {"criteria": 'Solved? "Refund" alone is not.\nSay why.', "examples": [
        {"inputs": {"query": "Broken?", "prediction": 'We refund.\n"Sorry"'}, "verdict": 1, "note": "no fix"},
        {"inputs": {"prediction": "Open settings."}, "verdict": 4}]})
    assert criterion(tomllib.loads(to_toml(made.as_dict()))) == made


@pytest.mark.timeout(600)  # a loaded 2-core machine takes most of a minute per page
def test_in_a_browser_the_section_judges_and_accepts_on_a_click(tmp_path: Path, labelled_file) -> None:
    from browser_session import browser_context, require_browser, wait_for_run
    from dashboard_process import streamlit_app

    from textgen_core.store import Store

    require_browser()
    db_path = tmp_path / "browser.duckdb"
    shutil.copyfile(labelled_file[0], db_path)
    run = labelled_file[1]
    env = dict(os.environ, TEXTGEN_EVAL_DB=str(db_path), TEXTGEN_EVAL_JUDGE_API_KEY="sk-test-align-page")
    with streamlit_app(tmp_path, env) as url:
        with browser_context() as context:
            context.set_default_timeout(WAIT)
            page = context.new_page()
            started = time.perf_counter()
            page.goto(f"{url}/label?run={run}&score=helpfulness&tab=agreement")
            heading = page.get_by_role("heading", name="Improve this judge")
            heading.wait_for(timeout=WAIT)
            page.get_by_role("button", name="Propose and judge candidates").click()
            accept = page.get_by_role("button", name=re.compile("Accept few-shot"))
            accept.wait_for(timeout=WAIT)
            accept.scroll_into_view_if_needed()
            wait_for_run(page)
            page.screenshot(path=str(tmp_path / "align_candidates.png"), full_page=True)
            accept.click()
            saved = page.get_by_text(re.compile(r"Saved helpfulness version 2"))
            saved.wait_for(timeout=WAIT)
            saved.scroll_into_view_if_needed()
            wait_for_run(page)
            page.screenshot(path=str(tmp_path / "align_accepted.png"), full_page=True)
            took = time.perf_counter() - started
    print(f"judged and accepted in {took:.1f} s; screenshots in {tmp_path}")
    assert Store(db_path).load_criterion("helpfulness")[0] == 2
