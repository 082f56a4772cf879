"""Alignment against a planted blind spot (tests/align/refund_judge.py), through the real client over HTTP.

The judge rates refund-only replies excellent unless its prompt speaks of refunds; 200 people's labels rate
them 1. The accepted version must mention refunds and raise the held-out weighted kappa by at least 0.2.
With labels that already agree with the judge (a little noise), no candidate may be accepted in at least 90%
of 20 seeds. Every call is counted before it is made, capped, and cached (a second alignment asks nothing).
"""

from __future__ import annotations

import pytest
from refund_judge import CRITERION, RefundJudge, agreeing, label_rows, people, rows
from sklearn.metrics import cohen_kappa_score

from judge_server import JudgeServer
from textgen_core.align import align, plan_calls, prepare
from textgen_core.errors import BudgetReached
from textgen_core.evaluate import evaluate
from textgen_core.judge import JudgeSettings
from textgen_core.judge.metrics.criteria import criterion, define
from textgen_core.model import Dataset
from textgen_core.store import Store


@pytest.fixture(scope="module")
def served():
    judge = RefundJudge()
    with JudgeServer(responder=judge) as server:
        yield server, judge


def _settings(server: JudgeServer, **more) -> JudgeSettings:
    return JudgeSettings(base_url=server.url, model="refund-judge", api_key="sk-test-align", timeout=5.0,
                         concurrency=8, retries=1, **more)


@pytest.fixture(scope="module")
def scored(served, tmp_path_factory):
    """One run of the blind judge over 200 replies, labelled twice: by people who see the blind spot (run 1)
    and by people who agree with the judge (run 2, the same rows)."""
    server, _ = served
    path = tmp_path_factory.mktemp("align") / "align.duckdb"
    store = Store(path)
    define(criterion(CRITERION))
    made = rows()
    dataset = store.save_dataset(Dataset("support", made), "support")
    first = evaluate(store, dataset, ["helpfulness"], judge=_settings(server), workers=1)
    second = evaluate(store, dataset, ["helpfulness"], judge=_settings(server), workers=1)
    store.write_labels(first, label_rows(made, people))
    store.write_labels(second, label_rows(made, agreeing))
    return store, first, second


def test_the_blind_spot_is_found_and_the_accepted_version_speaks_of_refunds(served, scored):
    server, judge = served
    store, run, _ = scored
    settings = _settings(server)
    setup = prepare(store, run, "helpfulness", seed=1)
    planned = plan_calls(setup, settings, store)
    server.reset()
    result = align(store, run, "helpfulness", settings, seed=1)
    made = server.count()
    assert 0 < made <= planned.calls  # the estimate bounds what is made (the rewrite's cells at most)
    assert result.calls == made
    assert result.chosen is not None, [j.why for j in result.judged]
    chosen = result.chosen.candidate.criterion
    assert "refund" in (chosen.criteria + " ".join(e.inputs[1][1] for e in chosen.examples)).lower()
    assert result.chosen.test.delta >= 0.2
    # the figures are the reference's: sklearn's quadratic-weighted kappa on the same held-out cells
    held = [k for k in setup.held_out if k in setup.current]
    ref_now = cohen_kappa_score([setup.cells[k].people for k in held], [setup.current[k] for k in held],
                                weights="quadratic", labels=setup.categories)
    assert result.current.value == pytest.approx(ref_now, abs=1e-9)
    assert result.current.value + 0.2 <= result.chosen.agreement.value
    # saved as the criterion's next version, with its provenance
    saved = store.load_criterion("helpfulness")
    assert saved is not None and saved[0] == result.saved_version and "refund" in str(saved[1]).lower()
    record = store.alignments(run).iloc[0]
    assert int(record["accepted_version"]) == result.saved_version
    # the held-out cells were never shown to a candidate: examples and the rewrite's prompt hold training cells only
    trained = {setup.cells[k].row.prediction for k in setup.train}
    only_held = {setup.cells[k].row.prediction for k in setup.held_out} - trained
    for j in result.judged:
        assert {dict(e.inputs)["prediction"] for e in j.candidate.criterion.examples} <= trained
        assert not any(text in j.candidate.prompt for text in only_held)
    # a second alignment: the same split, every reply from the cache, nothing asked
    server.reset()
    again = align(store, run, "helpfulness", settings, seed=1, accept_best=False)
    assert server.count() == 0 and again.calls == 0
    assert again.setup.held_out == setup.held_out
    assert plan_calls(again.setup, settings, store).calls == 0


def test_the_spending_cap_stops_an_alignment_and_what_it_got_is_kept(served, scored):
    server, _ = served
    store, run, _ = scored
    before = plan_calls(prepare(store, run, "helpfulness", seed=2), _settings(server), store)
    server.reset()
    with pytest.raises(BudgetReached, match="--max-calls"):
        align(store, run, "helpfulness", _settings(server, max_calls=5), seed=2)
    assert 1 <= server.count() <= 5
    after = plan_calls(prepare(store, run, "helpfulness", seed=2), _settings(server), store)
    assert after.calls < before.calls and after.bound == 0  # the rewrite's reply is cached: an exact count now
    server.reset()
    align(store, run, "helpfulness", _settings(server), seed=2, accept_best=False)
    assert server.count() == after.calls


@pytest.mark.timeout(600)
def test_labels_that_agree_with_the_judge_accept_nothing_in_nine_of_ten_seeds(served, scored):
    server, _ = served
    store, _, run = scored
    accepted = [align(store, run, "helpfulness", _settings(server), seed=seed, accept_best=False).best is not None
                for seed in range(20)]
    assert sum(accepted) <= 2, accepted
