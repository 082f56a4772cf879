"""Every view is an address: Results, Compare, Explore, Label and Runs read their state from the query string
and write it back; a link to a run carries its id; an unknown run is said so and nothing else is shown."""

from __future__ import annotations

from app_helpers import all_text, frame_with, no_exception, page, store

from textgen_core.evaluate import evaluate
from textgen_dashboard import data, state


def _two_runs(sample_run) -> tuple[int, int]:
    """The sample run (lexical metrics) and a newer one scoring word error rate only."""
    dataset_id, first = sample_run
    second = evaluate(store(), dataset_id, ["wer"], workers=1)
    data.refresh()
    return first, second


def _open(view: str, **params: str | list[str]):
    """The app with ``?params`` in its address, switched to the page as a pasted link opens it."""
    at = page("app.py")
    at.switch_page(f"views/{view}.py")
    for name, value in params.items():
        at.query_params[name] = value
    return at.run()


def _param(at, name: str) -> list[str]:
    """The values of one parameter of the page's address (AppTest keeps a lone value as a string)."""
    value = at.query_params.get(name, [])
    return [value] if isinstance(value, str) else list(value)


def _summary_scores(at) -> set[str]:
    return set(frame_with(at, "n_scored")["score"])


def test_results_opens_the_run_its_address_names_not_the_newest(sample_run):
    first, second = _two_runs(sample_run)
    at = _open("results", run=str(first))
    no_exception(at)
    assert at.selectbox(key=state.RESULTS_RUN).value == first
    assert "wer" not in _summary_scores(at) and len(_summary_scores(at)) > 1
    assert _param(at, "run") == [str(first)]
    # the view's state is written back: a reload of this address shows the same score and chart
    at.radio(key=state.RESULTS_CHART).set_value("Box").run()
    assert _param(at, "chart") == ["Box"]
    assert _param(at, "score") == [at.selectbox(key=state.RESULTS_SCORE).value]
    assert set(_param(at, "models")) == set(at.multiselect(key=state.RESULTS_MODELS).value)
    again = _open("results", **{k: _param(at, k) for k in at.query_params})
    assert again.radio(key=state.RESULTS_CHART).value == "Box"
    assert again.selectbox(key=state.RESULTS_SCORE).value == at.selectbox(key=state.RESULTS_SCORE).value
    # and the newest run by address
    newest = _open("results", run=str(second))
    assert _summary_scores(newest) == {"wer"}


def test_a_pasted_link_overrides_what_the_session_viewed_last(sample_run):
    first, second = _two_runs(sample_run)
    at = _open("results", run=str(second))
    assert at.selectbox(key=state.RESULTS_RUN).value == second
    at.query_params["run"] = str(first)  # the same browser session follows a link to the other run
    at.run()
    assert at.selectbox(key=state.RESULTS_RUN).value == first


def test_an_unknown_run_is_said_so_and_no_other_run_is_shown(sample_run):
    for view in ("results", "compare", "explore", "label", "runs"):
        at = _open(view, run="999")
        no_exception(at)
        assert any("There is no run 999" in e.value for e in at.error), view
        assert not at.dataframe or view == "runs", view  # Runs lists the runs above the choice
        assert not any(s.key in (state.RESULTS_RUN, state.COMPARE_RUN, state.EXPLORE_RUN, state.LABEL_RUN)
                       for s in at.selectbox), view
    at = _open("results", run="not-a-number")
    assert any("There is no run not" in e.value for e in at.error)


def test_compare_explore_label_and_runs_keep_their_state_in_the_address(sample_run):
    first, second = _two_runs(sample_run)
    models = store().get_run(first)["models"]
    at = _open("compare", run=str(first), baseline=models[1])
    no_exception(at)
    assert at.selectbox(key=state.COMPARE_RUN).value == first
    assert at.selectbox(key=state.COMPARE_BASELINE).value == models[1]
    assert _param(at, "baseline") == [models[1]]
    assert models[1] not in _param(at, "candidates")

    datum = str(store().load_dataset(sample_run[0]).rows[3].datum_id)
    at = _open("explore", run=str(second), datum=datum, search="the")
    no_exception(at)
    assert at.selectbox(key=state.EXPLORE_RUN).value == second
    assert at.selectbox(key=state.EXPLORE_DATUM).value == datum
    assert at.text_input(key=state.EXPLORE_TEXT).value == "the"
    assert _param(at, "search") == ["the"] and _param(at, "datum") == [datum]

    at = _open("label", run=str(first), annotator="ana")
    assert at.selectbox(key=state.LABEL_RUN).value == first
    assert at.text_input(key=state.LABEL_ANNOTATOR).value == "ana"
    assert _param(at, "annotator") == ["ana"] and _param(at, "run") == [str(first)]

    at = _open("runs", run=str(first))
    assert at.selectbox(key=state.RUNS_SELECTED).value == first
    links = [(link.proto.label, link.proto.query_string) for link in at.get("page_link")]
    assert (f"Open the results of run {first}", f"run={first}") in links, links


def test_deleting_a_run_leaves_a_message_and_the_address_forgets_it(sample_run):
    first, second = _two_runs(sample_run)
    at = _open("runs", run=str(second))
    at.checkbox(key=state.RUNS_CONFIRM_DELETE).check().run()
    at.button(key="runs.delete").click().run()
    no_exception(at)
    assert any(f"Deleted run {second}" in s.value for s in at.success)
    assert at.selectbox(key=state.RUNS_SELECTED).value == first
    assert _param(at, "run") == [str(first)]
    assert "There is no run" not in all_text(at)
