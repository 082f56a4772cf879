"""Issue 18 points 9, 11, 12 through the real runner and the loopback judge made constant.

The judge grades every answer CORRECT, rates every text's coherence 1 (the worst of 1-5) with one-word
reasons, and refuses every other request: answer relevance ends with no scored datum at all.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from judge_scripting import Fault, request_schema
from judge_server import JudgeServer
from textgen_core.cli.main import main
from textgen_core.cli.tables import print_summary
from textgen_core.compare import compare_models, judge_human_agreement
from textgen_core.evaluate import evaluate
from textgen_core.judge.settings import JudgeSettings
from textgen_core.model import Dataset, Datum
from textgen_core.store import Store
from textgen_core.summary import judge_warnings, unscored_lines

N = 5
REFUSAL = "no such model here"


def constant_judge(request: dict[str, Any]) -> Any:
    fields = set(((request_schema(request) or {}).get("properties") or {}))
    if "grade" in fields:
        return {"reason": "fine", "grade": "CORRECT"}
    if "score" in fields:
        return {"reason": "ok", "score": 1}
    if "preferred" in fields:
        return {"reason": "same", "preferred": "TIE"}
    return Fault.http(400, REFUSAL)


def rows() -> list[Datum]:
    out = []
    for i in range(N):
        query = f"What is {i} plus {i}?"
        out.append(Datum(f"d{i}", "model-a", query, f"It is {2 * i}.", (str(2 * i),), metadata={"human": i % 5 + 1}))
        out.append(Datum(f"d{i}", "model-b", query, "I do not know.", (str(2 * i),),
                         metadata={"human": (i + 2) % 5 + 1}))
    return out


@pytest.fixture(scope="module")
def constant_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    db = tmp_path_factory.mktemp("constant") / "textgen.duckdb"
    server = JudgeServer(responder=constant_judge)
    server.start()
    try:
        settings = JudgeSettings(base_url=server.url, model="judge-test", api_key="sk-test", timeout=5.0,
                                 concurrency=4, retries=0)
        store = Store(db)
        dataset_id = store.save_dataset(Dataset("sums", rows(), metadata_columns=("human",)))
        run_id = evaluate(store, dataset_id, ["qa_grade", "coherence", "answer_relevance", "pairwise_preference"],
                          {"pairwise_preference": {"baseline": "model-a"}}, judge=settings)
        store.close()
    finally:
        server.stop()
    return db, run_id


def test_compare_lists_an_unscorable_score_and_the_gate_fails_on_it(constant_run, tmp_path: Path, capsys) -> None:
    db, run_id = constant_run
    out = tmp_path / "cmp.csv"
    argv = ["--db", str(db), "compare", str(run_id), "--baseline", "model-a", "--resamples", "200",
            "--scores", "answer_relevance,qa_grade", "--out", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "inconclusive: no scored datums" in printed
    assert "Scales: answer_relevance 0-1, higher is better; qa_grade 0-1, higher is better." in printed
    assert "Pairwise preference" in printed  # the pairwise section is still there
    table = pd.read_csv(out)
    assert table["metric"].tolist() == ["answer_relevance", "qa_grade"]
    unscorable = table.set_index("metric").loc["answer_relevance"]
    assert unscorable["verdict"] == "inconclusive" and unscorable["why"] == "no scored datums"
    assert unscorable["unscored_baseline"] == N and unscorable["n"] == 0
    assert main([*argv, "--fail-if", "inconclusive"]) == 3
    assert "answer_relevance: inconclusive" in capsys.readouterr().out
    assert main([*argv[:-2], "--fail-if", "worse"]) == 0  # nothing is worse: the gate for worse passes


def test_compare_by_default_lists_every_score_but_the_pairwise_one(constant_run) -> None:
    db, run_id = constant_run
    frame = compare_models(Store(db, read_only=True), run_id, "model-a", resamples=100)
    assert frame["score"].tolist() == ["answer_relevance", "coherence", "qa_grade"]
    assert frame.set_index("score").loc["answer_relevance", "why"] == "no scored datums"


def test_an_unknown_score_is_an_error_even_beside_pairwise_results(constant_run, capsys) -> None:
    db, run_id = constant_run
    code = main(["--db", str(db), "compare", str(run_id), "--baseline", "model-a", "--scores", "faithfulnes"])
    assert code == 2
    err = capsys.readouterr().err
    assert "faithfulnes" in err and "Traceback" not in err


def test_summary_sums_up_why_cells_are_unscored_and_names_scales(constant_run, capsys) -> None:
    db, run_id = constant_run
    store = Store(db, read_only=True)
    lines = unscored_lines(store, run_id)
    assert lines["answer_relevance"].startswith(f"{2 * N} unscored: ")
    assert REFUSAL in lines["answer_relevance"] and f"({2 * N})" in lines["answer_relevance"]
    # the pairwise baseline is unscored by design: named, not counted as a failure
    assert lines["pairwise_preference"] == (f"{N} cells of the baseline model-a are not scored by design "
                                            "(not a failure)")
    assert "qa_grade" not in lines
    print_summary(store, run_id)
    printed = capsys.readouterr().out
    assert "coherence 1-5, higher is better" in printed and "qa_grade 0-1, higher is better" in printed
    assert f"why unscored, answer_relevance: {2 * N} unscored" in printed


def test_a_constant_judge_with_one_word_reasons_is_flagged(constant_run) -> None:
    db, run_id = constant_run
    warnings = judge_warnings(Store(db, read_only=True), run_id)
    joined = "\n".join(warnings)
    assert f"qa_grade (0-1, higher is better): every one of the {2 * N} scored cells (2 models) is 1" in joined
    assert f"coherence (1-5, higher is better): every one of the {2 * N} scored cells (2 models) is 1" in joined
    assert "qa_grade: " in joined and "reasons are one word or empty" in joined
    assert "coherence: " in joined


def test_a_varying_judge_with_real_reasons_is_not_flagged(tmp_path: Path) -> None:
    def varied(request: dict[str, Any]) -> Any:
        grade = "CORRECT" if "It is" in str(request) else "INCORRECT"
        return {"reason": "the answer gives the sum asked for", "grade": grade}

    server = JudgeServer(responder=varied)
    server.start()
    try:
        store = Store(tmp_path / "v.duckdb")
        settings = JudgeSettings(base_url=server.url, model="judge-test", api_key="sk-test", timeout=5.0)
        run_id = evaluate(store, store.save_dataset(Dataset("sums", rows())), ["qa_grade"], judge=settings)
    finally:
        server.stop()
    assert judge_warnings(store, run_id) == []


def test_label_agreement_uses_each_scores_own_range(constant_run) -> None:
    db, run_id = constant_run
    store = Store(db, read_only=True)
    frame = judge_human_agreement(store, run_id, "human", kind="label", scores=["coherence", "qa_grade"])
    assert frame.attrs["thresholds"] == {"coherence": 3.0, "qa_grade": 0.5}
    row = frame[(frame["model"] == "model-a") & (frame["score"] == "coherence")].iloc[0]
    humans = [i % 5 + 1 for i in range(N)]
    # coherence 1 is the worst rating: negative, never positive as a 0.5 cut would have it
    expected_agreement = sum(h < 3 for h in humans) / N
    assert row["agreement"] == pytest.approx(expected_agreement)
    judged = [False] * N
    said = [h >= 3 for h in humans]
    assert row["kappa"] == pytest.approx(cohen_kappa_score(judged, said), nan_ok=True) or pd.isna(row["kappa"])
    overridden = judge_human_agreement(store, run_id, "human", kind="label", scores=["coherence"], threshold=0.5)
    assert overridden.attrs["thresholds"] == {"coherence": 0.5}
    assert overridden.iloc[0]["agreement"] == pytest.approx(sum(h >= 0.5 for h in humans) / N)


def test_label_agreement_needs_a_threshold_for_an_open_range(constant_run, capsys) -> None:
    db, run_id = constant_run
    code = main(["--db", str(db), "agreement", str(run_id), "--human-column", "human", "--kind", "label",
                 "--scores", "coherence"])
    assert code == 0
    assert "coherence >= 3 (1-5, higher is better)" in capsys.readouterr().out


def test_a_constant_judge_and_few_labels_are_warned_on_the_comparison_rows(constant_run, tmp_path: Path,
                                                                           capsys) -> None:
    """Issue 28: 'not significant' with its interval, and the warnings travel with the row (CLI, pages, report)."""
    import shutil

    db, run_id = constant_run
    copy = tmp_path / "labelled.duckdb"
    shutil.copy(db, copy)
    store = Store(copy)
    store.write_labels(run_id, [(f"d{i}", "model-a", "qa_grade", "ana", 1.0, None, "random", None) for i in range(3)])
    store.close()
    frame = compare_models(Store(copy, read_only=True), run_id, "model-a", scores=["qa_grade", "coherence"],
                           resamples=100).set_index("score")
    qa = frame.loc["qa_grade"]
    assert qa["verdict"] == "not significant" and qa["p_value"] == 1.0
    assert qa["ci_low"] < 0 < qa["ci_high"]  # 5 equal pairs: never [0, 0]
    assert f"the difference may be anywhere in [{qa['ci_low']:+.4f}, {qa['ci_high']:+.4f}]" in qa["why"]
    assert "every one of the 10 scored cells of model-a and model-b is 1" in qa["warnings"]
    assert "only 3 human label(s); at least 10 are needed" in qa["warnings"]
    coherence = frame.loc["coherence", "warnings"]
    assert "is 1; a judge whose verdicts do not vary" in coherence and "human label" not in coherence
    assert main(["--db", str(copy), "compare", str(run_id), "--baseline", "model-a", "--scores", "qa_grade",
                 "--resamples", "100"]) == 0
    printed = capsys.readouterr().out
    assert "warning: qa_grade: every one of the 10 scored cells" in printed and "not significant" in printed
    table = printed.split("verdict: better")[0]  # the legend says why 'not significant' is not 'no difference'
    assert "no difference" not in table
