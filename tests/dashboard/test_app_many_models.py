"""Results and Compare on a run of 10,000 models (#19.9): each page renders in bounded time, shows the best few
by the first score's mean with a line saying how many of how many, and takes any other model by name.

The run is built once through the real store write path (a lexical metric only). Model ``model{i}`` answers
both datums right when i is a multiple of 97, one of two when i is even, none otherwise, so the best models
are known without the code under test.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
import streamlit as st
from app_helpers import all_text, frame_with, no_exception, page

from textgen_core.evaluate import evaluate
from textgen_core.model import Dataset, Datum
from textgen_core.store import Store
from textgen_dashboard import data, state
from textgen_dashboard.pickers import MANY_MODELS

MODELS = 10_000
pytestmark = pytest.mark.timeout(240)


def _prediction(i: int, datum: int) -> str:
    right = i % 97 == 0 or (i % 2 == 0 and datum == 0)
    return f"answer {datum}" if right else "something else"


@pytest.fixture(scope="module")
def many_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("many") / "many.duckdb"
    store = Store(path)
    rows = [Datum(f"d{d}", f"model{i:05d}", query=f"Question {d}?", prediction=_prediction(i, d),
                  references=(f"answer {d}",)) for i in range(MODELS) for d in range(2)]
    evaluate(store, store.save_dataset(Dataset("many", rows)), ["exact_match"], workers=1)
    store.close()
    return path


@pytest.fixture
def many_run(many_db: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv(data.DB_ENV, str(many_db))
    st.cache_data.clear()
    yield many_db
    st.cache_data.clear()


#: The 20 best by mean exact_match: every model right on both datums, in the run's order (ties keep it).
BEST = [f"model{i:05d}" for i in range(0, MODELS, 97)][:20]


def open_page(name: str):
    at = page("app.py").run()
    return at.switch_page(name).run(timeout=120)


def test_results_shows_the_best_twenty_of_ten_thousand_and_any_other_by_name(many_run: Path) -> None:
    at = open_page("views/results.py")
    no_exception(at)
    assert "Showing 20 of 10,000 models" in all_text(at)
    shown = frame_with(at, "ci_low")
    assert list(shown["model"]) == BEST and (shown["mean"] == 1.0).all()
    assert len(at.get("plotly_chart")) == 3  # the figures cover the chosen models only
    picker = at.multiselect(key=state.RESULTS_MODELS)
    assert len(picker.options) == MODELS
    picker.set_value(["model00001", "model09998"]).run(timeout=120)
    no_exception(at)
    shown = frame_with(at, "ci_low")
    assert dict(zip(shown["model"], shown["mean"])) == {"model00001": 0.0, "model09998": 0.5}
    assert "Showing 2 of 10,000 models" in all_text(at)


def test_compare_takes_the_best_twenty_candidates_of_ten_thousand(many_run: Path) -> None:
    at = open_page("views/compare.py")
    no_exception(at)
    baseline = at.selectbox(key=state.COMPARE_BASELINE).value
    assert baseline == "model00000"
    assert "Showing 20 of 9,999 models" in all_text(at)
    table = frame_with(at, "candidate")
    expected = [m for m in [f"model{i:05d}" for i in range(0, MODELS, 97)] if m != baseline][:20]
    assert sorted(table["candidate"]) == sorted(expected)


def test_a_run_of_many_models_never_selects_more_than_the_bound(many_run: Path) -> None:
    at = page("app.py").run()
    at.session_state[state.RESULTS_MODELS] = [f"model{i:05d}" for i in range(MANY_MODELS + 30)]
    at.switch_page("views/results.py").run(timeout=120)
    no_exception(at)
    assert len(frame_with(at, "ci_low")) == MANY_MODELS
    assert f"Showing {MANY_MODELS} of 10,000 models" in all_text(at)
