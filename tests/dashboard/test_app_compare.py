"""Compare page through AppTest: the table is compare_models', colours follow direction, agreement is scipy's."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from app_helpers import all_text, app_page, frame_with, no_exception, page, store, summary_scores

from textgen_core.compare import compare_models
from textgen_core.datasets import load_dataset
from textgen_dashboard import state
from textgen_core.compare.verdicts import BETTER, INCONCLUSIVE, NO_DIFFERENCE, WORSE
from textgen_dashboard.compare import comparison_table, largest, p_text, regressions_first, styled
from textgen_dashboard.words import verdict_words
from textgen_dashboard.compare_charts import forest_figure, scatter_figure, thin
from textgen_dashboard.state import EXPLORE_DATUM, EXPLORE_RUN



def compare_page():
    return app_page("compare")


def synthetic_run() -> int:
    """Three models, 40 datums: 'kind' is clearly less toxic, 'terse' clearly worse on ROUGE-1.

    toxicity is lower-is-better; custom_score is declared by no metric, and 'terse' lacks it on 4 datums.
    """
    rng = np.random.default_rng(3)
    models = ("base", "kind", "terse")
    lines = ["id,model,question,answer,reference,rating"]
    lines += [f"d{i:02d},{m},Question {i}?,Answer {i} by {m},Reference {i},{1 + i % 5}"
              for i in range(40) for m in models]
    db = store()
    dataset_id = db.save_dataset(load_dataset("\n".join(lines).encode(), file_name="synthetic.csv", name="synthetic"))
    run_id = db.create_run(dataset_id, ["toxicity", "rouge"], {}, {}, list(models))
    cells = []
    for i in range(40):
        toxicity = {"base": 0.5, "kind": 0.3, "terse": 0.5}
        rouge = {"base": 0.6, "kind": 0.6, "terse": 0.4}
        for m in models:
            cells.append((f"d{i:02d}", m, "toxicity", "toxicity", toxicity[m] + rng.normal(0, 0.05), None, None))
            cells.append((f"d{i:02d}", m, "rouge", "rouge1", rouge[m] + rng.normal(0, 0.05), None, None))
            if not (m == "terse" and i < 4):
                cells.append((f"d{i:02d}", m, "custom", "custom_score", float(rng.normal()), None, None))
    db.write_cells(run_id, cells)
    db.set_run_status(run_id, "finished")
    return run_id


def intervals(expected: pd.DataFrame) -> list[str]:
    return ["too few" if lo != lo else f"[{lo:+.4f}, {hi:+.4f}]"
            for lo, hi in zip(expected["ci_low"], expected["ci_high"])]


def table_of(at) -> pd.DataFrame:
    return frame_with(at, "verdict")


# -- pages ---------------------------------------------------------------------
def test_page_file_runs_on_its_own(sample_run):
    _, run_id = sample_run
    at = page("views/compare.py").run()
    no_exception(at)
    assert sorted(table_of(at)["score"].tolist()) == sorted(summary_scores(run_id))


def test_sample_table_is_compare_models(sample_run):
    _, run_id = sample_run
    at = compare_page()
    no_exception(at)
    assert at.selectbox(key=state.COMPARE_RUN).value == run_id
    assert at.selectbox(key=state.COMPARE_BASELINE).value == "model-a"
    assert at.multiselect(key=state.COMPARE_CANDIDATES).value == ["model-b"]
    shown = table_of(at)
    scores = summary_scores(run_id)
    assert {"rouge1", "bleu"} <= set(scores)
    expected = regressions_first(compare_models(store(), run_id, "model-a", ["model-b"], scores=scores,
                                                resamples=2000, seed=0))
    assert shown["score"].tolist() == expected["score"].tolist() and set(scores) == set(shown["score"])
    assert shown["verdict"].tolist() == [verdict_words(v, lo, hi) for v, lo, hi in zip(
        expected["verdict"], expected["ci_low"], expected["ci_high"])]
    assert shown["mde"].tolist() == pytest.approx(expected["mde"].tolist(), nan_ok=True)
    assert shown["delta"].tolist() == pytest.approx(expected["delta"].tolist())
    assert shown["p"].tolist() == pytest.approx(expected["p_value"].tolist())
    assert shown["p (Holm)"].tolist() == pytest.approx(expected["p_adjusted"].tolist(), nan_ok=True)
    for column in ("n", "wins", "ties", "losses"):
        assert shown[column].tolist() == expected[column].tolist()
    assert shown["baseline mean"].tolist() == pytest.approx(expected["baseline_mean"].tolist())
    assert shown["95% CI"].tolist() == intervals(expected)
    text = all_text(at).replace("\\", "")
    assert expected.attrs["note"].replace("p_adjusted", "p (Holm)") in text
    assert "paired permutation (exact)" in text and "expanded percentile" in text  # the tests used
    assert "Holm-adjusted p" in text and "CI is unadjusted" in text  # which p decides, which interval is drawn
    assert len(at.get("plotly_chart")) == 2  # the forest plot and the per-datum scatter


def test_settings_drive_compare_models(sample_run):
    _, run_id = sample_run
    at = compare_page()
    at.selectbox(key=state.COMPARE_BASELINE).set_value("model-b").run()
    assert at.multiselect(key=state.COMPARE_CANDIDATES).value == ["model-a"]
    at.multiselect(key=state.COMPARE_SCORES).set_value(["rouge1", "bleu"])
    at.number_input(key=state.COMPARE_RESAMPLES).set_value(500)
    at.number_input(key=state.COMPARE_SEED).set_value(7)
    at.number_input(key=state.COMPARE_TIES).set_value(0.01)
    at.run()
    no_exception(at)
    shown = table_of(at)
    expected = regressions_first(compare_models(store(), run_id, "model-b", ["model-a"], scores=["rouge1", "bleu"],
                                                resamples=500, seed=7, tie_tolerance=0.01))
    assert shown["score"].tolist() == expected["score"].tolist()
    assert shown["delta"].tolist() == pytest.approx(expected["delta"].tolist())
    assert shown["p"].tolist() == pytest.approx(expected["p_value"].tolist())
    assert shown["ties"].tolist() == expected["ties"].tolist()
    assert shown["95% CI"].tolist() == intervals(expected)
    assert shown["95% CI"].tolist() != intervals(regressions_first(compare_models(
        store(), run_id, "model-b", ["model-a"], scores=["rouge1", "bleu"], resamples=500, seed=8,
        tie_tolerance=0.01)))  # the seed reached the bootstrap


def test_holm_off_drops_the_adjusted_column(sample_run):
    at = compare_page()
    at.checkbox(key=state.COMPARE_HOLM).uncheck().run()
    no_exception(at)
    assert "p (Holm)" not in table_of(at).columns
    assert "the p-values are not adjusted" in all_text(at)


def test_nothing_to_compare_warns(sample_run):
    at = compare_page()
    at.multiselect(key=state.COMPARE_CANDIDATES).set_value([]).run()
    no_exception(at)
    assert "Pick at least one candidate." in [w.value for w in at.warning]
    assert not [f for f in at.dataframe if "verdict" in f.value.columns]


def test_a_large_comparison_waits_for_a_click(sample_run, monkeypatch):
    import textgen_dashboard.compare

    monkeypatch.setattr(textgen_dashboard.compare, "AUTO_DRAWS", 1000)  # the sample's 46 pairs per score count as large
    at = compare_page()
    no_exception(at)
    assert not [f for f in at.dataframe if "verdict" in f.value.columns]
    assert "datum pairs 2,000 times" in all_text(at)
    at.button(key=state.COMPARE_GO).click().run()
    no_exception(at)
    assert len(table_of(at)) > 0
    at.number_input(key=state.COMPARE_SEED).set_value(3).run()  # later changes on the run start at once
    assert len(table_of(at)) > 0 and state.COMPARE_GO not in [b.key for b in at.button]


def test_run_with_one_model(app_db):
    db = store()
    dataset_id = db.save_dataset(load_dataset(b"id,model,answer,reference\nq1,solo,a,a\n", file_name="one.csv",
                                              name="one model"))
    run_id = db.create_run(dataset_id, ["rouge"], {}, {}, ["solo"])
    db.write_cells(run_id, [("q1", "solo", "rouge", "rouge1", 1.0, None, None)])
    at = compare_page()
    no_exception(at)
    assert "needs scores for two models or more" in all_text(at)


def test_colours_follow_each_score_direction(app_db):
    run_id = synthetic_run()
    at = compare_page()
    no_exception(at)
    assert at.multiselect(key=state.COMPARE_CANDIDATES).value == ["kind", "terse"]
    table = table_of(at)
    assert table["verdict"].iloc[0] == WORSE  # regressions first
    shown = table.set_index(["candidate", "score"])
    assert shown.loc[("kind", "toxicity"), "delta"] < 0
    assert shown.loc[("kind", "toxicity"), "verdict"] == BETTER  # lower toxicity is better
    assert shown.loc[("kind", "toxicity"), "better"] == "↓ lower"
    assert shown.loc[("terse", "rouge1"), "verdict"] == WORSE
    # not detected is not equal: the words say so, with the interval of what the data still allow
    assert shown.loc[("kind", "rouge1"), "verdict"].startswith("not significant, delta in [")
    assert "no difference" not in " ".join(table["verdict"])
    assert shown.loc[("terse", "custom_score"), "candidate s/u/e/m"] == "36 / 0 / 0 / 4"
    assert shown.loc[("terse", "custom_score"), "n"] == 36
    assert "No metric declares the direction of custom_score" in " ".join(w.value for w in at.warning).replace("\\", "")
    expected = regressions_first(compare_models(store(), run_id, "base", ["kind", "terse"]))
    assert table["delta"].tolist() == pytest.approx(expected["delta"].tolist())
    at.toggle(key=state.COMPARE_REGRESSIONS).set_value(True).run()
    no_exception(at)
    assert table_of(at)[["candidate", "score"]].values.tolist() == [["terse", "rouge1"]]
    at.number_input(key=state.COMPARE_PLAN).set_value(0.05).run()
    needed = table_of(at)["datums needed"].iloc[0]
    from statsmodels.stats.power import TTestPower
    spread = expected.set_index(["candidate", "score"]).loc[("terse", "rouge1"), "spread"]
    assert TTestPower().power(0.05 / spread, needed, 0.05) >= 0.8 > TTestPower().power(0.05 / spread, needed - 1, 0.05)


def test_scatter_and_largest_differences(app_db):
    run_id = synthetic_run()
    at = compare_page()
    at.selectbox(key=state.COMPARE_PAIR_SCORE).set_value("toxicity")
    at.selectbox(key=state.COMPARE_PAIR_CANDIDATE).set_value("kind")
    at.number_input(key=state.COMPARE_TOP_N).set_value(5)
    at.run()
    no_exception(at)
    top = frame_with(at, "outcome")
    pairs = store().score_values(run_id, scores=["toxicity"]).pivot(index="datum_id", columns="model", values="value")
    diffs = (pairs["kind"] - pairs["base"]).sort_values(key=abs, ascending=False)
    assert top["datum_id"].tolist() == diffs.index[:5].tolist()
    assert top["diff"].tolist() == pytest.approx(diffs.iloc[:5].tolist())
    assert set(top["outcome"]) == {BETTER}  # every large toxicity drop is a win
    assert top["prediction_1"].iloc[0].endswith("by base") and top["prediction_2"].iloc[0].endswith("by kind")
    scatter = json.loads(at.get("plotly_chart")[1].proto.spec)
    assert scatter["layout"]["xaxis"]["title"]["text"] == "base (baseline)"
    assert any(trace.get("name") == "equal" for trace in scatter["data"])


def test_a_picked_datum_opens_explore(sample_run):
    _, run_id = sample_run
    at = compare_page()
    datum_id = frame_with(at, "outcome")["datum_id"].iloc[0]
    at.session_state[state.COMPARE_OPEN] = datum_id  # what the table's selection callback stores
    at.run()
    no_exception(at)
    assert [t.value for t in at.title] == ["Explore"]
    assert at.session_state[EXPLORE_RUN] == run_id and at.session_state[EXPLORE_DATUM] == datum_id
    assert f"Datum {datum_id}" in [h.value.replace("\\", "") for h in at.header]
    # Explore: a word-level diff of the two models' answers, as plain text.
    from textgen_core.compare.word_diff import word_diff_text
    from textgen_dashboard.state import EXPLORE_DIFF_FIRST, EXPLORE_DIFF_SECOND

    assert "Word differences" in [h.value for h in at.subheader]
    first, second = at.selectbox(key=EXPLORE_DIFF_FIRST).value, at.selectbox(key=EXPLORE_DIFF_SECOND).value
    rows = {r.model: r.prediction for r in store().datum(store().get_run(run_id)["dataset_id"], datum_id)}
    assert (first, second) == ("model-a", "model-b")
    assert word_diff_text(rows[first], rows[second]) in [c.value for c in at.code]


# -- pure helpers ------------------------------------------------------------------
def comparison_frame(holm: bool) -> pd.DataFrame:
    frame = pd.DataFrame({
        "baseline": "a", "candidate": ["b", "b", "c"], "score": ["wer", "bleu", "wer"],
        "direction": ["lower", "higher", "lower"], "family": "holm", "n": [50, 50, 50],
        "baseline_mean": [0.3, 0.2, 0.3], "candidate_mean": [0.2, 0.1, 0.31], "delta": [-0.1, -0.1, 0.01],
        "ci_low": [-0.15, -0.12, -0.02], "ci_high": [-0.05, -0.08, 0.04], "p_value": [0.001, 0.02, 0.5],
        "p_adjusted": [0.003, 0.04, 0.5], "verdict": [BETTER, WORSE, NO_DIFFERENCE], "why": "",
        "mde": 0.05, "spread": 0.1, "wins": [40, 5, 20], "ties": [0, 0, 5], "losses": [10, 45, 25],
        **{f"{k}_{r}": 0 for k in ("scored", "unscored", "empty", "missing") for r in ("baseline", "candidate")},
        "test": "paired permutation (exact)"})
    frame.attrs.update(holm=holm, confidence=0.95, baseline="a", alpha=0.05)
    return frame


def test_regressions_come_first_and_directionless_scores_last():
    frame = comparison_frame(holm=True)
    frame.loc[2, "verdict"] = INCONCLUSIVE
    extra = frame.iloc[[0]].assign(family="apart", score="answer_length", verdict=NO_DIFFERENCE)
    ordered = regressions_first(pd.concat([extra, frame], ignore_index=True))
    assert ordered["verdict"].tolist() == [WORSE, INCONCLUSIVE, BETTER, NO_DIFFERENCE]
    assert ordered["score"].tolist()[-1] == "answer_length"


def test_styler_paints_decided_deltas_only():
    frame = comparison_frame(holm=True)
    table = comparison_table(frame)
    ctx = styled(table)._compute().ctx
    column = table.columns.get_loc("delta")
    colours = [dict(ctx.get((row, column), [])).get("background-color", "") for row in range(3)]
    assert "26, 152, 80" in colours[0] and "215, 48, 39" in colours[1] and colours[2] == ""
    assert "datums needed" not in table.columns and "datums needed" in comparison_table(frame, 0.1).columns
    html = styled(table).to_html()
    assert "-0.1000" in html and "+0.0100" in html


def test_p_text():
    assert [p_text(v) for v in (0.5, 0.00012, 0.00001, float("nan"))] == ["0.5000", "0.0001", "1.0e-05", "–"]


def test_forest_has_a_panel_per_score_and_a_colour_per_verdict():
    frame = comparison_frame(holm=True)
    figure = forest_figure(frame)
    annotations = [a.text for a in figure.layout.annotations]
    assert annotations == ["wer (↓ lower is better)", "bleu (↑ higher is better)"]
    names = {trace.name for trace in figure.data}
    assert names == {BETTER, WORSE, NO_DIFFERENCE}
    better = next(t for t in figure.data if t.name == BETTER)
    assert list(better.x) == [-0.1] and list(better.error_x.arrayminus) == pytest.approx([0.05])


def test_scatter_escapes_names_and_thins_large_pairs():
    pairs = pd.DataFrame({"datum_id": ["<b>x</b>", "y"], "baseline": [0.1, 0.5], "candidate": [0.3, 0.5]})
    pairs["diff"] = pairs["candidate"] - pairs["baseline"]
    figure = scatter_figure(pairs, "s<1>", "a<i>", "b", "higher", 1e-9)
    assert "<" not in figure.layout.title.text.replace("&lt;", "")
    assert ["&lt;b&gt;x&lt;/b&gt;"] in [list(t.text) for t in figure.data if t.text is not None]
    many = pd.DataFrame({"datum_id": [f"d{i}" for i in range(50_000)], "baseline": 0.0,
                         "candidate": np.linspace(-1, 1, 50_000)})
    many["diff"] = many["candidate"]
    kept = thin(many, 1000)
    assert len(kept) == 1000 and {"d0", "d49999"} <= set(kept["datum_id"])


def test_largest_differences_keep_dataset_order_among_equals():
    pairs = pd.DataFrame({"datum_id": ["d0", "d1", "d2", "d3"], "baseline": 0.5, "diff": [0.1, -0.25, 0.25, 0.0]})
    pairs["candidate"] = pairs["baseline"] + pairs["diff"]
    top = largest(pairs, 3, "lower", 1e-9)
    assert top["datum_id"].tolist() == ["d1", "d2", "d0"]
    assert top["outcome"].tolist() == [BETTER, WORSE, WORSE]  # lower is better: a drop is a win


# -- the pairwise preference judge ------------------------------------------------------
def pairwise_run() -> int:
    """'base' against 'cand' on 6 datums: 3 wins, 1 agreed tie, 2 order-inconsistent; plus a rouge1 score."""
    lines = ["id,model,question,answer"] + [f"d{i},{m},Question {i}?,Answer {i} by {m}" for i in range(6)
                                             for m in ("base", "cand")]
    db = store()
    dataset_id = db.save_dataset(load_dataset("\n".join(lines).encode(), file_name="pw.csv", name="pairwise"))
    run_id = db.create_run(dataset_id, ["pairwise_preference", "rouge"], {}, {}, ["base", "cand"])
    said = [("candidate", "candidate")] * 3 + [("tie", "tie"), ("baseline", "candidate"), ("baseline", "candidate")]
    outcome = ["win"] * 3 + ["tie", "order-inconsistent", "order-inconsistent"]
    cells = []
    for i, ((first, second), result) in enumerate(zip(said, outcome)):
        details = {"baseline": "base", "outcome": result, "baseline first": first, "candidate first": second,
                   "candidate_words": 5, "baseline_words": 4}
        value = {"win": 1.0, "tie": 0.5}.get(result, 0.5)
        cells.append((f"d{i}", "cand", "pairwise_preference", "pairwise_preference", value, details, None))
        cells.append((f"d{i}", "base", "pairwise_preference", "pairwise_preference", None, None,
                      "baseline: the model the others are compared with"))
        for m in ("base", "cand"):
            cells.append((f"d{i}", m, "rouge", "rouge1", 0.1 * i + (0.05 if m == "cand" else 0.0), None, None))
    db.write_cells(run_id, cells)
    db.set_run_status(run_id, "finished")
    return run_id


def test_pairwise_preference_on_compare_and_results(app_db):
    from textgen_core.compare.pairwise import pairwise_summary

    run_id = pairwise_run()
    expected = pairwise_summary(store(), run_id).iloc[0]
    assert (expected["wins"], expected["ties"], expected["order_inconsistent"]) == (3, 1, 2)
    assert expected["win_rate"] == pytest.approx(4.5 / 6) and expected["flip_rate"] == pytest.approx(2 / 6)
    assert expected["longer_preferred"] == pytest.approx(8 / 10)  # 6 verdicts of the wins + 2 of the 4 flip verdicts
    for at in (compare_page(), page("app.py").run().switch_page("views/results.py").run()):
        no_exception(at)
        shown = frame_with(at, "flip_rate").iloc[0]
        assert shown["candidate"] == "cand" and (shown["wins"], shown["ties"], shown["losses"]) == (3, 1, 0)
        assert shown["win_rate"] == pytest.approx(0.75) and shown["flip_rate"] == pytest.approx(1 / 3)
        assert "Pairwise preference against base" in [s.value for s in at.subheader]
    at = compare_page()
    assert at.multiselect(key=state.COMPARE_SCORES).value == ["rouge1"]  # the pairwise cell is not a mean to test


def test_explore_shows_both_answers_and_both_pairwise_verdicts(app_db):
    from judge_server import JudgeServer
    from pairwise_judges import first_position, rows

    from textgen_core.evaluate import evaluate
    from textgen_core.judge.settings import JudgeSettings
    from textgen_core.model import Dataset

    with JudgeServer(responder=first_position) as server:
        settings = JudgeSettings(base_url=server.url, model="judge-test", api_key="sk-test")
        db = store()
        run_id = evaluate(db, db.save_dataset(Dataset("capitals", rows())), ["pairwise_preference"], judge=settings)
    at = page("app.py").run()
    at.session_state[EXPLORE_RUN] = run_id
    at.session_state[EXPLORE_DATUM] = "d0"
    at = at.switch_page("views/explore.py").run()
    no_exception(at)
    shown = [t.value for t in at.text]
    assert "Lyon." in shown and "Paris." in shown  # the baseline's and a candidate's answers, side by side
    verdicts = [f for f in (e.value for e in at.dataframe) if "verdict" in f.columns and "text" in f.columns]
    right = next(f for f in verdicts if "A = right" in " ".join(f["text"]))
    assert right["text"].tolist() == ["baseline first: A = base, B = right", "candidate first: A = right, B = base"]
    assert right["verdict"].tolist() == ["baseline", "candidate"]  # the judge followed the position
    assert set(right["reason"]) == {"the first answer is always better"}
