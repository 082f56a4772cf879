"""The main path in a real browser: sample run from Home, Results table and chart, a datum's drill-down.

Starts `streamlit run app.py` on a free local port with a temporary database and
drives the system's headless Chromium through Playwright (no browser download).
Skipped only when Chromium is missing outside CI; under CI=true that fails the test.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterator

import pytest

from browser_session import WAIT_MS, browser_context, require_browser, wait_for_run
from dashboard_process import shared_app, streamlit_app


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    """`streamlit run app.py` of its own on a free 127.0.0.1 port over an empty database (a server that has not
    run the app yet); yields its URL."""
    require_browser()
    env = dict(os.environ, TEXTGEN_EVAL_DB=str(tmp_path / "browser.duckdb"))
    with streamlit_app(tmp_path, env) as url:
        yield url


@pytest.fixture
def shared_server(tmp_path: Path) -> Iterator[str]:
    """The dashboard (its process shared with this worker's other browser tests) over an empty database."""
    require_browser()
    with shared_app(tmp_path / "browser.duckdb") as url:
        yield url


def _sample_scored(sample_file: tuple[Path, int, int]):
    """The run the Home button makes, as the suite's shared sample file holds it (the same dataset, name and
    metrics, scored once per test process): (read-only store, run id)."""
    from textgen_core.store import Store

    path, _, run_id = sample_file
    return Store(path, read_only=True), run_id


def _expected_row(store, run_id: int, index: int) -> str:
    """The datum id of a row of the Results rows table, from the same run computed in memory."""
    from textgen_core.summary import run_summary
    from textgen_dashboard.results import summary_table

    run = store.get_run(run_id)
    score = summary_table(run_summary(store, run_id), run["metrics"], run["models"])["score"].iloc[0]
    rows = store.find_rows(run_id, score=score, order="asc", limit=index + 1)
    return str(rows["datum_id"].iloc[index])


@pytest.mark.timeout(90)
def test_sample_run_results_and_drill_down(shared_server: str, tmp_path: Path, _sample_file) -> None:
    from playwright.sync_api import expect

    row = 2
    memory = _sample_scored(_sample_file)
    expected = _expected_row(*memory, row)

    with browser_context() as context:
        page = context.new_page()
        page.goto(shared_server)
        page.get_by_role("button", name="Load the sample dataset and run lexical metrics").click()
        outcome = page.get_by_text(re.compile(r"Run \d+ (finished in|failed|was cancelled)"))
        outcome.wait_for(timeout=45_000)
        assert "finished in" in outcome.inner_text(), outcome.inner_text()

        page.get_by_role("link", name="See the results").click()
        expect(page.get_by_role("heading", name="Summary")).to_be_visible()
        summary = page.get_by_test_id("stDataFrame").first
        expect(summary).to_be_visible()
        expect(page.get_by_test_id("stPlotlyChart").first.locator(".main-svg").first).to_be_visible()
        expect(page.locator(".js-plotly-plot .bars path").first).to_be_attached()
        page.screenshot(path=str(tmp_path / "results.png"), full_page=True)

        rows = page.get_by_test_id("stDataFrame").last
        rows.scroll_into_view_if_needed()
        box = rows.bounding_box()
        assert box is not None
        page.mouse.click(box["x"] + 18, box["y"] + 35 * (row + 1) + 17)  # that row's selection marker
        expect(page.get_by_role("heading", name="Explore")).to_be_visible()
        expect(page.get_by_role("heading", name=f"Datum {expected}")).to_be_visible()
        expect(page.get_by_role("heading", name="Predictions")).to_be_visible()
        expect(page.get_by_role("heading", name="Contexts, in order")).to_be_visible()
        assert f"datum={expected}" in page.url
        page.screenshot(path=str(tmp_path / "explore.png"), full_page=True)
        _compare_step(page, tmp_path, *memory)
    memory[0].close()
    assert (tmp_path / "results.png").stat().st_size > 0 and (tmp_path / "explore.png").stat().st_size > 0


# -- compare step (appended by the Compare page) ----------------------------------
def _compare_step(page, tmp_path: Path, store, run_id: int) -> None:
    """Open Compare from the navigation: the sample's table shows rouge1's interval as compare_models computes it."""
    from functools import partial

    from playwright.sync_api import expect

    from textgen_core.compare import compare_models

    expected = compare_models(store, run_id, "model-a", ["model-b"]).set_index("score")
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Compare").click()
    expect(page.get_by_role("heading", name="Compare models")).to_be_visible()
    page.get_by_role("heading", name="Baseline: model-a").wait_for(timeout=45_000)
    table = page.get_by_test_id("stDataFrame").first
    expect(table).to_be_visible()
    # the grid draws on a canvas; its cells are also in an aria-hidden table, which these locators read
    cell = partial(table.get_by_role, exact=True, include_hidden=True)
    expect(cell("columnheader", name="delta")).to_be_attached(timeout=WAIT_MS)
    expect(cell("gridcell", name="rouge1")).to_be_attached(timeout=WAIT_MS)
    row = expected.loc["rouge1"]
    interval = f"[{row['ci_low']:+.4f}, {row['ci_high']:+.4f}]"  # a text cell, the same seed's bootstrap
    expect(cell("gridcell", name=interval)).to_be_attached(timeout=WAIT_MS)
    expect(page.get_by_text("comparisons are made")).to_be_visible()
    page.screenshot(path=str(tmp_path / "compare.png"), full_page=True)


# -- hostile text (issue 11): nothing from the data becomes markup, and no request leaves 127.0.0.1 ----------
ATTACKER = "attacker.invalid"


def _hostile_run(db: Path) -> str:
    """A dataset whose column names, models, ids, metadata and answers are markdown/HTML; returns one datum id."""
    import pandas as pd

    from textgen_core.datasets import load_dataset
    from textgen_core.evaluate import evaluate
    from textgen_core.store import Store

    image = f"![x](http://{ATTACKER}/col.png)"
    ids = [f"![id](http://{ATTACKER}/id{i}.png)" for i in range(3)]
    models = [f"[Re-enter your API key](http://{ATTACKER}/login)", f'<img src=http://{ATTACKER}/m.png><a href="http://{ATTACKER}/l">link</a>']
    rows = [{"id": d, "model": m, "question": f"**Q** <b>{i}</b>",
             "answer": f'<img src="http://{ATTACKER}/a.png"> ![a](http://{ATTACKER}/a2.png) :red[alert]',
             # references differ by model, so Explore lists them "for <models>"
             "reference": f"[ref](http://{ATTACKER}/r) {m}", image: f"![v](http://{ATTACKER}/val.png)"}
            for i, d in enumerate(ids) for m in models]
    store = Store(db)
    dataset_id = store.save_dataset(load_dataset(pd.DataFrame(rows), name=f"<b>{image}</b>"))
    evaluate(store, dataset_id, ["exact_match", "rouge"], workers=1)
    return ids[0]


@pytest.mark.timeout(150)
def test_markdown_in_the_data_fetches_nothing(server: str, tmp_path: Path) -> None:
    """Every page over a hostile dataset: no request to any host but 127.0.0.1, no image or link from the data.
    The fresh server's first request is a deep link, which still gets the navigation app.py declares."""
    from urllib.parse import quote, urlparse

    from playwright.sync_api import expect

    datum = _hostile_run(tmp_path / "browser.duckdb")
    requests: list[str] = []
    # and should one slip through, it goes nowhere: only loopback requests are let out
    with browser_context(loopback_only=True) as context:
        context.on("request", lambda request: requests.append(request.url))
        page = context.new_page()
        # The server's first request is a deep link to the datum's page: it still gets app.py's navigation
        # (a page reached through the sidebar is drawn as one opened by its address, without reloading the app)
        nav = page.get_by_test_id("stSidebarNav")
        for path, heading in [(f"/explore?run=1&datum={quote(datum)}", "Explore"), ("Home", None),
                              ("Upload", "Upload"), ("Evaluate", "Evaluate"), ("Results", "Results"),
                              ("Compare", "Compare models"), ("Runs", "Runs")]:
            if path.startswith("/"):
                page.goto(server + path)
            else:
                nav.get_by_role("link", name=path).click()
            if heading:
                page.get_by_role("heading", name=heading).first.wait_for(timeout=45_000)
            page.wait_for_load_state("networkidle")
            wait_for_run(page)  # late elements (charts, tables) drawn
            if path.startswith("/explore"):
                expect(nav).to_contain_text("Home")
                expect(nav).to_contain_text("Compare")
                assert "compare.py" not in nav.inner_text() and "app" not in nav.inner_text().split()
                assert "run=1" in page.url and "datum=" in page.url, page.url
            for selector in (f'img[src*="{ATTACKER}"]', f'a[href*="{ATTACKER}"]', f'[style*="{ATTACKER}"]'):
                found = page.locator(selector)
                assert found.count() == 0, (path, selector, found.first.evaluate(
                    "e => e.closest('[data-testid^=st]') ? e.closest('[data-testid^=st]').outerHTML : e.outerHTML"))
        page.screenshot(path=str(tmp_path / "hostile.png"), full_page=True)
    outside = [url for url in requests if urlparse(url).scheme in {"http", "https", "ws", "wss"}
               and urlparse(url).hostname != "127.0.0.1"]
    assert not outside, outside
    assert not [url for url in requests if urlparse(url).hostname == ATTACKER]
    assert requests  # the listener saw the page's own traffic
