"""What an alignment starts from: the stratified, seeded split stored and reused, people's value of a cell,
a built-in rating copied into an editable criterion, and the inputs it refuses with one message."""

from __future__ import annotations

import pytest
from refund_judge import CRITERION, RefundJudge, label_rows, people, rows

from judge_server import JudgeServer
from textgen_core.align import align, prepare
from textgen_core.align.setup import people_value
from textgen_core.errors import ParameterError, StoreError
from textgen_core.evaluate import evaluate
from textgen_core.judge import JudgeSettings
from textgen_core.judge.metrics.criteria import criterion, define
from textgen_core.model import Dataset
from textgen_core.store import Store


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    with JudgeServer(responder=RefundJudge()) as server:
        store = Store(tmp_path_factory.mktemp("setup") / "s.duckdb")
        settings = JudgeSettings(base_url=server.url, model="refund-judge", api_key="sk-test-setup", timeout=5.0)
        define(criterion(CRITERION))
        made = rows(60)
        dataset = store.save_dataset(Dataset("support", made), "support")
        run = evaluate(store, dataset, ["helpfulness", "coherence"], judge=settings, workers=1)
        yield store, run, made, settings, server


def test_the_split_is_stratified_seeded_stored_and_reused_with_new_cells_added(world):
    store, run, made, _, _ = world
    store.write_labels(run, label_rows(made[:40], people))
    first = prepare(store, run, "helpfulness", seed=4)
    assert len(first.train) + len(first.held_out) == 40 and not set(first.train) & set(first.held_out)
    for value in {c.people for c in first.cells.values()}:  # each people's value is held out in its share
        stratum = [k for k, c in first.cells.items() if c.people == value]
        held = [k for k in stratum if k in first.held_out]
        assert abs(len(held) - 0.3 * len(stratum)) <= 1 and (len(stratum) < 2 or 0 < len(held) < len(stratum))
    assert prepare(store, run, "helpfulness", seed=4).held_out == first.held_out
    assert prepare(store, run, "helpfulness", seed=5).held_out != first.held_out
    store.write_labels(run, label_rows(made[40:], people))  # 20 more labelled later
    later = prepare(store, run, "helpfulness", seed=4)
    assert set(first.held_out) <= set(later.held_out) and set(first.train) <= set(later.train)
    assert len(later.cells) == 60 and store.split(run, "helpfulness", run, 4, 0.3) is not None


def test_people_value_is_the_most_common_then_nearest_the_mean_then_the_lower():
    assert people_value([4, 4, 1]) == 4.0
    assert people_value([2, 4, 3, 3, 2]) == 3.0  # 2 and 3 twice each; the mean is 2.8
    assert people_value([1, 2]) == 1.0  # a tie at the same distance from the mean goes to the lower


def test_a_built_in_rating_is_copied_into_an_editable_criterion(world):
    store, run, made, settings, _ = world
    store.write_labels(run, label_rows(made, people, score="coherence"))
    result = align(store, run, "coherence", settings, seed=0)
    s = result.setup
    assert s.copied_from == "coherence" and s.base.name == "coherence_custom"
    assert "coherence" in s.base.criteria.lower() and s.base.output.max == 5
    assert result.saved_version == 2, [j.why for j in result.judged]
    assert store.load_criterion("coherence_custom", 1)[1]["criteria"] == s.base.criteria  # the copy is version 1


def test_what_cannot_be_aligned_is_one_message(world):
    store, run, made, _, _ = world
    with pytest.raises(ParameterError, match="--holdout must be a share from 0.05 to 0.8"):
        prepare(store, run, "helpfulness", holdout=0.9)
    with pytest.raises(ParameterError, match="--seed must be a whole number"):
        prepare(store, run, "helpfulness", seed=-1)
    with pytest.raises(StoreError, match="no run with id 999"):
        prepare(store, run, "helpfulness", labels_from=999)
    other = evaluate(store, 1, ["helpfulness"], judge=world[3], workers=1)
    with pytest.raises(ParameterError, match=f"run {other} has no labels of helpfulness"):
        prepare(store, other, "helpfulness")
    store.write_labels(other, label_rows(made[:5], people))
    with pytest.raises(ParameterError, match="5 labelled cells of helpfulness .* needs at least 10"):
        prepare(store, other, "helpfulness")
    store.write_labels(other, [("t000", "bot", "helpfulness", "ben", 7.0, None, "random", None)])
    with pytest.raises(ParameterError, match="label of helpfulness off its scale .* 7 by 'ben' on datum 't000'"):
        prepare(store, other, "helpfulness")
    # labels of another run of the same cells (written here too: this test does not rely on the one before it)
    store.write_labels(run, label_rows(made, people))
    assert len(prepare(store, other, "helpfulness", labels_from=run).cells) == 60
