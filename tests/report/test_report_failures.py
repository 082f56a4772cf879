"""The report reads a run's stored failure modes (never groups them): the same rates and comparison the library gives."""

from __future__ import annotations

from pathlib import Path

from textgen_core.evaluate import evaluate
from textgen_core.failures import FailureRule, find_modes, stored_modes
from textgen_core.model import Dataset, Datum
from textgen_core.report import ReportOptions, build_report, report_text
from textgen_core.store import Store

WORDS = ["the answer names the wrong city", "the reply is about the weather", "the text repeats the question",
         "the response gives no date at all"]


def test_stored_failure_modes_are_in_the_report(tmp_path: Path) -> None:
    store = Store(tmp_path / "f.duckdb")
    rows = [Datum(f"d{i:02d}", model, prediction=f"{WORDS[i % 4]} {i}" if (i + len(model)) % 3 else "paris is right",
                  references=("paris is right",)) for i in range(40) for model in ("m1", "m22")]
    run_id = evaluate(store, store.save_dataset(Dataset("f", rows)), ["token_f1"], workers=1)
    assert build_report(store, run_id)["failure_modes"] is None  # nothing stored: nothing grouped by the report
    find_modes(store, run_id, scores=["f1"], rule=FailureRule(lowest=0.5))
    modes = stored_modes(store, run_id)
    report = build_report(store, run_id, ReportOptions(baseline="m1"))
    part = report["failure_modes"]
    assert [m["mode"] for m in part["modes"]] == [int(m) for m in modes.modes["mode"]]
    rates = modes.rates()
    assert [(r["mode"], r["model"], r["failing"], r["cells"]) for r in part["rates"]] == [
        (int(r.mode), r.model, int(r.failing), int(r.cells)) for r in rates.itertuples()]
    table = modes.compare("m1", alpha=0.05)
    assert [r["p_holm"] for r in part["comparison"]["rows"]] == [None if p != p else p for p in table["p_holm"]]
    assert "Failure modes" in report_text(report)
