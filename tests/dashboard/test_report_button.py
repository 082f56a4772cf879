"""The "Download report" button of Results and Compare in a real browser: the file it gives opens offline, holds the
run's numbers (and, from Compare, the comparison on screen), and no key typed or kept in the environment."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterator

import pytest

from browser_session import browser_context, require_browser
from dashboard_process import streamlit_app
from textgen_core.compare import compare_models
from textgen_core.evaluate import evaluate
from textgen_core.model import Dataset, Datum
from textgen_core.store import Store
from textgen_core.summary import run_summary

KEY = "sk-dashboard-env-key-7777"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A lexical run of two models whose texts hold the environment's key and a script; the dashboard over it."""
    require_browser()
    db = tmp_path / "button.duckdb"
    store = Store(db)
    rows = [Datum(f"d{i}", m, query=f"q{i} <script>window.__pwned=1</script>",
                  prediction=f"w{i % 3} w{(i + len(m)) % 4} {KEY if i == 2 else ''}", references=(f"w{i % 3} w1",))
            for i in range(12) for m in ("alpha", "beta")]
    evaluate(store, store.save_dataset(Dataset("button", rows)), ["token_f1"], workers=1)
    store.close()
    env = dict(os.environ, TEXTGEN_EVAL_DB=str(db), TEXTGEN_EVAL_JUDGE_API_KEY=KEY)
    with streamlit_app(tmp_path, env) as url:
        yield url, db


def _download(page, where: Path) -> str:
    button = page.get_by_role("button", name="Download report")
    try:
        button.wait_for(timeout=180_000)
    except Exception:
        page.screenshot(path=str(where.with_suffix(".failed.png")), full_page=True)
        raise
    with page.expect_download(timeout=60_000) as found:
        button.click()
    found.value.save_as(where)
    return where.read_text(encoding="utf-8")


def _open_offline(context, path: Path) -> tuple[list[str], object]:
    page = context.new_page()
    asked: list[str] = []

    def block(route) -> None:
        if route.request.url == path.as_uri():
            route.continue_()
        else:
            asked.append(route.request.url)
            route.abort()

    page.route("**/*", block)
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return asked, page


@pytest.mark.timeout(480)
def test_download_report_from_results_and_compare(served: tuple[str, Path], tmp_path: Path) -> None:
    url, db = served
    store = Store(db, read_only=True)
    summary = run_summary(store, 1)
    frame = compare_models(store, 1, "alpha")
    with browser_context() as context:
        page = context.new_page()
        page.goto(f"{url}/results")
        text = _download(page, tmp_path / "results.html")
        page.screenshot(path=str(tmp_path / "results_page.png"))
        assert KEY not in text and text.startswith("<!DOCTYPE html>")
        asked, report = _open_offline(context, tmp_path / "results.html")
        assert asked == [] and report.evaluate("window.__pwned") is None
        for row in summary.itertuples():
            cell = report.locator(f"table.summary[data-score='{row.score}'] tbody tr", has_text=row.model)
            assert float(cell.locator("td").nth(1).get_attribute("data-value")) == row.mean
        assert report.locator("#comparison").count() == 0
        report.screenshot(path=str(tmp_path / "results_report.png"))

        page.get_by_test_id("stSidebarNav").get_by_role("link", name="Compare").click()  # no reload of the app
        text = _download(page, tmp_path / "compare.html")
        page.screenshot(path=str(tmp_path / "compare_page.png"))
        assert KEY not in text
        asked, report = _open_offline(context, tmp_path / "compare.html")
        assert asked == []
        rows = report.locator("table.comparison tbody tr")
        assert rows.count() == len(frame)
        for i, row in enumerate(frame.itertuples()):
            assert float(rows.nth(i).locator("td").nth(6).get_attribute("data-value")) == row.delta
    print(json.dumps({"screenshots": str(tmp_path)}))
