"""The "Failure modes" section on Results and Compare: stored modes as textgen_core.failures reads them, an example
that opens in Explore, a run without stored modes; and the same in headless Chromium (screenshots kept in tmp)."""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import numpy as np
import pytest
from app_helpers import all_text, app_page, frame_with, no_exception, store

from planted_failures import draw, planted_rates, write_run
from textgen_core.failures import find_modes, stored_modes
from textgen_dashboard import data, state
from textgen_dashboard.failures import _interval

#: Milliseconds a browser step may wait: a loaded 2-core machine takes most of a minute to draw a page.
WAIT = 150_000


def _planted(db) -> int:
    rng = np.random.default_rng(5)
    run = write_run(db, 400, draw(400, planted_rates(0.1, "refund"), rng), rng)
    find_modes(db, run.run_id, seed=0)
    return run.run_id


@pytest.fixture(scope="module")
def planted_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """The planted run and its stored modes, made once for the module: (database file, run id)."""
    from textgen_core.store import Store

    path = tmp_path_factory.mktemp("planted") / "planted.duckdb"
    db = Store(path)
    run_id = _planted(db)
    db.close()
    return path, run_id


@pytest.fixture
def planted(app_db, planted_file) -> int:
    """The dashboard's database is a copy of the planted one: each test may write to its own."""
    path, run_id = planted_file
    shutil.copyfile(path, app_db)
    data.refresh()
    return run_id


def test_results_shows_the_stored_modes_with_each_models_rate(planted) -> None:
    at = app_page("results")
    no_exception(at)
    assert "Failure modes" in all_text(at)
    shown = frame_with(at, "words")
    modes = stored_modes(store(), planted)
    assert shown["name"].tolist() == modes.modes["name"].tolist()
    rates = modes.rates().set_index(["mode", "model"])
    for model in ("base", "cand"):
        assert shown[model].tolist() == [_interval(*rates.loc[(m, model), ["rate", "low", "high"]])
                                         for m in shown["mode"]]
    examples = frame_with(at, "text")
    first = modes.examples(int(shown["mode"].iloc[0]), 5)
    assert examples["datum_id"].tolist() == first["datum_id"].tolist()


def test_an_example_opens_in_explore(planted) -> None:
    at = app_page("results")
    datum = frame_with(at, "text")["datum_id"].iloc[0]
    at.session_state["results.failures.open"] = datum  # what the examples table's selection callback stores
    at.run()
    assert at.session_state[state.EXPLORE_DATUM] == datum and at.session_state[state.EXPLORE_RUN] == planted


def test_compare_flags_the_doubled_mode(planted) -> None:
    at = app_page("compare")
    at.selectbox(key=state.COMPARE_BASELINE).set_value("base").run()
    no_exception(at)
    table = frame_with(at, "p_holm")
    expected = stored_modes(store(), planted).compare("base", ["cand"])
    assert table["flagged"].tolist() == expected["flagged"].tolist() and table["flagged"].sum() == 1
    flagged_name = table.loc[table["flagged"], "name"].iloc[0]
    assert "refund" in flagged_name


def test_a_run_without_stored_modes_says_how_to_get_them(app_db) -> None:
    rng = np.random.default_rng(1)
    run = write_run(store(), 30, draw(30, planted_rates(0.1, None), rng), rng)
    data.refresh()
    at = app_page("results")
    no_exception(at)
    assert f"No failure modes stored for this run. `textgen-eval failures {run.run_id}`" in all_text(at).replace(
        "\\", "")


@pytest.mark.timeout(600)  # a loaded 2-core machine takes most of a minute per page
def test_in_a_browser_results_and_compare_draw_the_modes(tmp_path: Path, planted_file) -> None:
    from browser_session import browser_context, require_browser, wait_for_address, wait_for_run
    from dashboard_process import shared_app
    from playwright.sync_api import expect

    require_browser()
    db_path = tmp_path / "browser.duckdb"
    shutil.copyfile(planted_file[0], db_path)
    run_id = planted_file[1]
    with shared_app(db_path) as url:
        with browser_context() as context:
            context.set_default_timeout(WAIT)
            page = context.new_page()
            started = time.perf_counter()
            page.goto(f"{url}/results?run={run_id}")
            heading = page.get_by_role("heading", name="Failure modes")
            heading.wait_for(timeout=WAIT)
            heading.scroll_into_view_if_needed()
            page.get_by_text(re.compile(r"run \d+: \d+ failing judgement")).wait_for(timeout=WAIT)
            expect(page.get_by_role("columnheader", name="words", exact=True, include_hidden=True)
                   ).to_be_attached(timeout=WAIT)
            wait_for_run(page)
            shown = time.perf_counter() - started
            page.screenshot(path=str(tmp_path / "results_failures.png"), full_page=True)
            # Compare through the sidebar (no reload of the app): the database's one run, named in the address
            page.get_by_test_id("stSidebarNav").get_by_role("link", name="Compare").click()
            page.get_by_role("heading", name="Compare models").wait_for(timeout=WAIT)
            wait_for_address(page, f"run={run_id}", timeout=WAIT)
            page.get_by_role("heading", name="Failure modes").wait_for(timeout=WAIT)
            holm = page.get_by_text(re.compile(r"Holm family is every \(candidate, mode\)"))
            holm.wait_for(timeout=WAIT)
            holm.scroll_into_view_if_needed()
            # the grids draw on a canvas; their cells are also in an aria-hidden table, which these locators read
            expect(page.get_by_role("columnheader", name="Holm p", exact=True, include_hidden=True)
                   ).to_be_attached(timeout=WAIT)
            expect(page.get_by_role("gridcell", name="new in candidate", include_hidden=True).or_(
                page.get_by_role("gridcell", name=re.compile("refund"), include_hidden=True)).first
                   ).to_be_attached(timeout=WAIT)
            wait_for_run(page)
            page.screenshot(path=str(tmp_path / "compare_failures.png"), full_page=True)
    print(f"results page with failure modes shown in {shown:.1f} s; screenshots in {tmp_path}")
    assert (tmp_path / "results_failures.png").stat().st_size > 0


def test_judge_names_are_shown_with_the_word_name_beside_them(planted) -> None:
    from judge_server import JudgeServer
    from textgen_core.failures.judge_names import name_modes
    from textgen_core.judge.settings import JudgeSettings

    def named(body: dict) -> dict:  # the mode's first distinctive word, in a sentence
        return {"name": "fails on " + body["messages"][-1]["content"].split("\n")[2].split(",")[0]}

    with JudgeServer(responder=named) as server:
        settings = JudgeSettings(base_url=server.url, model="namer", api_key="sk-n", timeout=5.0, retries=1)
        name_modes(store(), planted, stored_modes(store(), planted), settings)
    data.refresh()
    at = app_page("results")
    no_exception(at)
    shown = frame_with(at, "words")
    modes = stored_modes(store(), planted)
    assert shown["word name"].tolist() == modes.modes["name"].tolist()
    named_rows = shown[shown["mode"] >= 0]
    assert all(n.startswith("fails on ") for n in named_rows["name"])
    assert shown.loc[shown["mode"] < 0, "name"].tolist() == ["(unsorted: fits no mode)"]
    assert "Names by the judge namer" in all_text(at)
