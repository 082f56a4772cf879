"""Runs over time in a real browser (the worker's one shared Streamlit server): a run renamed and tagged on Runs and
named so in the run picker, a cross-run comparison on Compare refused in words and then allowed, an edited file saved
on Upload as the next version with its diff and the versions listed. Screenshots in the test's folder."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest

from browser_session import browser_context, require_browser
from dashboard_process import shared_app

#: Milliseconds a step may wait: a page's script runs in seconds on a quiet machine, far longer on a loaded one.
WAIT = 60_000


def _rows(models: dict[str, float], seed: int, edited: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    lines = ["id,model,question,answer,reference"]
    for i in range(40):
        for model, chance in models.items():
            answer = "the cat sat on the mat" if rng.random() < chance else "a dog ran in the park"
            lines.append(f"d{i},{model},q{i}{'?' if i < edited else ''},{answer},the cat sat on the mat")
    return lines


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """Two versions of 'answers' with three runs (run 3: rouge with a stemmer), then the dashboard over them."""
    from textgen_core.catalog import store_version
    from textgen_core.datasets import ColumnMapping, load_dataset
    from textgen_core.evaluate import evaluate
    from textgen_core.store import Store

    require_browser()
    folder = tmp_path_factory.mktemp("over_time_browser")
    db = Store(folder / "browser.duckdb")
    mapping = ColumnMapping(id="id", model="model", query="question", prediction="answer", references=("reference",))
    first = "\n".join(_rows({"a": 0.6, "b": 0.75}, 1)).encode()
    stored = store_version(db, load_dataset(first, mapping, name="answers", file_name="answers.csv"), "answers")
    evaluate(db, stored.dataset_id, ["exact_match", "rouge"], workers=1)
    evaluate(db, stored.dataset_id, ["rouge"], params={"rouge": {"use_stemmer": True}}, workers=1)
    db.close()
    (folder / "edited.csv").write_text("\n".join(_rows({"a": 0.6, "b": 0.75, "c": 0.9}, 1, edited=3)) + "\n")
    with shared_app(folder / "browser.duckdb") as url:
        yield url, folder


@pytest.mark.timeout(240)
def test_names_cross_run_compare_and_versions_in_the_browser(server: tuple[str, Path]) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=WAIT)
    url, folder = server
    with browser_context() as context:
        context.set_default_timeout(WAIT)
        page = context.new_page()
        page.goto(f"{url}/runs?run=2")
        page.get_by_role("heading", name="Runs").wait_for(timeout=90_000)  # the first run imports all
        page.get_by_role("textbox", name="Name", exact=True).fill("week-48 candidate")
        page.get_by_role("textbox", name="Add tags (separated by spaces or commas)").fill("prod")
        page.get_by_role("button", name="Save name, tags and note").click()
        expect(page.get_by_text("Run 2: named 'week-48 candidate'; tagged prod.")).to_be_visible()
        expect(page.get_by_role("combobox", name="Run")).to_have_value(
            "#2 · week-48 candidate · [prod] · answers · finished · rouge")
        expect(page.get_by_role("textbox", name="Add tags (separated by spaces or commas)")).to_have_value("")
        assert "run=2" in page.url  # the address still carries the id
        page.screenshot(path=str(folder / "runs.png"), full_page=True)

        page.goto(f"{url}/compare?across=1&base_run=1&base_model=a&cand_run=2&cand_model=a")
        expect(page.get_by_text("so their numbers are not comparable")).to_be_visible()
        page.screenshot(path=str(folder / "compare_refused.png"), full_page=True)
        expect(page.get_by_text(re.compile(r"rouge1: use_stemmer: False \S+ True")).first).to_be_visible()
        page.get_by_text("Allow different judges").first.click()
        expect(page.get_by_text("Compared despite different settings")).to_be_visible()
        expect(page.get_by_test_id("stDataFrame").first).to_be_visible()
        page.screenshot(path=str(folder / "compare_allowed.png"), full_page=True)

        page.get_by_test_id("stSidebarNav").get_by_role("link", name="Upload").click()  # no reload of the app
        page.locator("input[type=file]").set_input_files(str(folder / "edited.csv"))
        expect(page.get_by_role("heading", name="Column mapping")).to_be_visible()
        page.get_by_role("textbox", name="Dataset name").fill("answers")
        page.get_by_role("button", name="Save dataset").click()
        expect(page.get_by_text("as version 2 of answers. Since version 1: datums added 0, removed 0, changed 40; "
                                "models added: c.")).to_be_visible()
        expect(page.get_by_text("Versions of this dataset (2)")).to_be_visible()
        page.screenshot(path=str(folder / "upload.png"), full_page=True)
