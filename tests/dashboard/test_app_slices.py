"""Slices on Results and Compare: the numbers are textgen_core.compare.slices' (as `summary --by` and
`compare --by` print them), the slice is in the address, and the Holm family's size is shown."""

from __future__ import annotations

from app_helpers import all_text, frame_with, no_exception, page, store

from textgen_core.compare.slices import compare_by, summary_by
from textgen_dashboard import state


def _open(view: str, **params: str):
    at = page("app.py")
    at.switch_page(f"views/{view}.py")
    for name, value in params.items():
        at.query_params[name] = value
    return at.run()


def test_results_by_a_metadata_column(sample_run):
    _, run_id = sample_run
    at = _open("results", run=str(run_id), score="rouge1", slice="human_label")
    no_exception(at)
    assert at.selectbox(key=state.RESULTS_SLICE).value == "human_label"
    shown = frame_with(at, "mean [95% CI]")
    expected = summary_by(store(), run_id, "human_label")
    expected = expected[expected["score"] == "rouge1"]
    assert shown["slice"].tolist() == expected["slice"].tolist()
    assert shown["n"].tolist() == expected["n_scored"].tolist()
    first = expected.iloc[0]
    assert shown["mean [95% CI]"].iloc[0].startswith(f"{first['mean']:.4f}")
    at.selectbox(key=state.RESULTS_SLICE).set_value(None).run()
    assert "slice" not in at.query_params and not [f for f in at.dataframe if "mean [95% CI]" in f.value.columns]


def test_compare_by_a_metadata_column_in_one_holm_family(sample_run):
    _, run_id = sample_run
    at = _open("compare", run=str(run_id), slice="human_label")
    no_exception(at)
    shown = frame_with(at, "slice")
    expected = compare_by(store(), run_id, "model-a", "human_label", ["model-b"],
                          scores=at.multiselect(key=state.COMPARE_SCORES).value)
    assert shown["slice"].tolist() == expected["slice"].tolist()
    assert shown["n"].tolist() == expected["n"].tolist()
    assert "no difference" not in " ".join(shown["verdict"])
    assert f"the Holm family holds {expected.attrs['family']} comparisons" in all_text(at)
