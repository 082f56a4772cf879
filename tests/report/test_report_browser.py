"""The report opened in a real browser with every network request blocked: nothing is asked of any host, the planted
script never runs, the planted key is nowhere, the headline numbers are the summary's and the comparison's, and the
rows filter in the page."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from browser_session import browser_context, require_browser
from report_runs import BASE, CANDIDATE, PLANTED_KEY, build_hostile_run
from textgen_core.cli.main import main
from textgen_core.compare import compare_models
from textgen_core.summary import run_summary, summary_table


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The hostile run, its HTML and JSON reports written by the CLI (with the planted key in the environment)."""
    folder = tmp_path_factory.mktemp("report")
    store, run_id = build_hostile_run(folder / "run.duckdb")
    store.close()
    db = str(folder / "run.duckdb")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TEXTGEN_EVAL_JUDGE_API_KEY", PLANTED_KEY)
        for name in ("report.html", "report.json"):
            code = main(["--db", db, "report", str(run_id), "--compare", BASE, "--calibrate", "--out",
                         str(folder / name)])
            assert code == 0
    return {"folder": folder, "db": db, "run": run_id, "store": store}


def test_no_planted_key_and_no_live_markup_in_the_files(made: dict) -> None:
    html = (made["folder"] / "report.html").read_text(encoding="utf-8")
    data = (made["folder"] / "report.json").read_text(encoding="utf-8")
    for text in (html, data):
        assert PLANTED_KEY not in text
        assert "[redacted]" in text  # the key was there, in a prediction, an id, a reason, and is scrubbed
    assert html.count("<script") == 1  # ours, at the end
    assert "<img" not in html and "<a " not in html
    assert not re.search(r"<[^>]*\son[a-z]+=", html)  # no event handler attribute in any element
    assert "&lt;script&gt;window.__pwned" in html
    assert 'http-equiv="Content-Security-Policy" content="default-src &#x27;none&#x27;;' in html


@pytest.mark.timeout(120)
def test_opened_offline_nothing_requested_nothing_runs(made: dict) -> None:
    require_browser()
    path = made["folder"] / "report.html"
    asked: list[str] = []
    with browser_context() as context:
        def block(route) -> None:
            if route.request.url != path.as_uri():
                asked.append(route.request.url)
                route.abort()
            else:
                route.continue_()

        context.route("**/*", block)
        page = context.new_page()
        seen: list[str] = []
        page.on("request", lambda request: seen.append(request.url))
        page.goto(path.as_uri())
        page.wait_for_load_state("load")
        assert asked == [] and seen == [path.as_uri()]
        assert page.evaluate("window.__pwned") is None
        assert page.locator("a").count() == 0 and page.locator("img").count() == 0
        assert page.locator("script").count() == 1
        assert page.locator("meta[http-equiv]").get_attribute("content").startswith("default-src 'none';")
        assert PLANTED_KEY not in page.content()
        page.screenshot(path=str(made["folder"] / "top.png"))

        _headline_numbers_equal_the_library(page, made)
        _rows_filter_in_the_page(page)
        page.locator("#datums").screenshot(path=str(made["folder"] / "rows.png"))


def _headline_numbers_equal_the_library(page, made: dict) -> None:
    store, run_id = made["store"], made["run"]
    summary = run_summary(store, run_id)
    printed = summary_table(store, run_id)  # what `textgen-eval summary` prints
    checked = 0
    for row in summary.itertuples():
        cells = page.locator(f"table.summary[data-score='{row.score}'] tbody tr").filter(
            has=page.locator("td", has_text=re.compile(f"^{re.escape(row.model)}$")))
        assert cells.count() == 1, (row.score, row.model)
        mean = cells.locator("td").nth(1)
        assert float(mean.get_attribute("data-value")) == row.mean
        interval = cells.locator("td").nth(2).inner_text()
        counts = cells.locator("td").nth(3).inner_text()
        assert printed.loc[row.score, row.model] == f"{mean.inner_text()} {interval} {counts}"
        checked += 1
    assert checked == len(summary) > 0
    frame = compare_models(store, run_id, BASE)
    rows = page.locator("table.comparison tbody tr")
    assert rows.count() == len(frame)
    for i, row in enumerate(frame.itertuples()):
        cells = rows.nth(i).locator("td")
        assert cells.nth(1).inner_text() == row.score and cells.nth(0).inner_text() == CANDIDATE
        assert float(cells.nth(6).get_attribute("data-value")) == row.delta
        assert float(cells.nth(8).get_attribute("data-value")) == row.p_value
        assert float(cells.nth(9).get_attribute("data-value")) == row.p_adjusted
        assert cells.nth(10).inner_text().startswith(row.verdict)


def _rows_filter_in_the_page(page) -> None:
    count = page.locator("#f-count")
    assert count.inner_text() == "24 of 24 rows shown"
    page.fill("#f-text", "topic5?")
    assert count.inner_text() == "2 of 24 rows shown"
    page.fill("#f-text", "")
    page.select_option("#f-model", CANDIDATE)
    assert count.inner_text() == "12 of 24 rows shown"
    page.select_option("#f-model", "")
    page.select_option("#f-score", label="coherence")
    page.fill("#f-min", "4")
    shown = page.locator("#datum-table tbody.row:visible")
    assert shown.count() > 0
    values = [float(v) for v in shown.evaluate_all("rows => rows.map(r => r.getAttribute('data-s0'))")]
    assert all(v >= 4 for v in values)
    page.fill("#f-min", "")
    assert page.evaluate("window.__pwned") is None


def test_json_twin_holds_the_library_numbers_exactly(made: dict) -> None:
    data = json.loads((made["folder"] / "report.json").read_text(encoding="utf-8"))
    store, run_id = made["store"], made["run"]
    assert data["schema"] == "textgen-eval-report/1"
    summary = run_summary(store, run_id)
    got = {(r["model"], r["score"]): r for r in data["summary"]["rows"]}
    for row in summary.itertuples():
        mine = got[(row.model, row.score)]
        assert (mine["mean"], mine["ci_low"], mine["ci_high"]) == (row.mean, row.ci_low, row.ci_high)
        assert (mine["n_scored"], mine["n_unscored"], mine["n_empty"], mine["n_missing"]) == (
            row.n_scored, row.n_unscored, row.n_empty, row.n_missing)
    frame = compare_models(store, run_id, BASE)
    for mine, row in zip(data["comparison"]["rows"], frame.itertuples()):
        assert (mine["score"], mine["delta"], mine["ci_low"], mine["ci_high"], mine["p_value"], mine["p_adjusted"],
                mine["verdict"]) == (row.score, row.delta, row.ci_low, row.ci_high, row.p_value, row.p_adjusted,
                                     row.verdict)
    assert data["calibration"]["means"] and data["human_agreement"][0]["score"] == "coherence"
    assert data["datums"]["mode"] == "all" and data["datums"]["shown"] == 24
    assert data["run"]["judge"]["prompt_versions"] and data["run"]["usage"]["judge_calls"] > 0
