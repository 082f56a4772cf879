"""Results page: why cells are unscored, one line per score beside the counts, and a constant judge's warning."""

from __future__ import annotations

from app_helpers import all_text, frame_with, no_exception, page, store

from textgen_core.judge.metrics.pairwise_preference import IS_BASELINE
from textgen_core.model import Dataset, Datum
from textgen_dashboard import data
from textgen_dashboard.results import SUMMARY_COLUMNS


def test_summary_says_why_cells_are_unscored_next_to_the_counts(app_db) -> None:
    db = store()
    rows = [Datum(f"d{i}", m, "q", "p", ("r",)) for i in range(6) for m in ("a", "b")]
    run_id = db.create_run(db.save_dataset(Dataset("d", rows)), ["qa_grade", "pairwise_preference"], {}, {},
                           ["a", "b"])
    cells = [(f"d{i}", m, "qa_grade", "qa_grade", 1.0 if i < 3 else None, None,
              None if i < 3 else ("timed out" if i < 5 else "cut off")) for i in range(6) for m in ("a", "b")]
    cells += [(f"d{i}", "a", "pairwise_preference", "pairwise_preference", None, None, IS_BASELINE)
              for i in range(6)]
    cells += [(f"d{i}", "b", "pairwise_preference", "pairwise_preference", 0.5, None, None) for i in range(6)]
    db.write_cells(run_id, cells)
    data.refresh()
    at = page("app.py").run()
    at = at.switch_page("views/results.py").run()
    no_exception(at)
    shown = frame_with(at, "why")
    assert list(shown.columns) == SUMMARY_COLUMNS
    # the reason sits right after the counts, before the spread columns: in view at 1400 px
    assert SUMMARY_COLUMNS.index("why") < SUMMARY_COLUMNS.index("median")
    why = dict(zip(shown["score"], shown["why"]))
    assert why["qa_grade"] == "6 unscored: timed out (4); cut off (2)"
    assert why["pairwise_preference"] == "6 cells of the baseline a are not scored by design (not a failure)"
    scale = dict(zip(shown["score"], shown["scale"]))
    assert scale["qa_grade"] == "0-1, higher is better"
    assert "every one of the 6 scored cells (2 models) is 1" in all_text(at)
