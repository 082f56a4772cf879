"""Planted truth: five failure types in varied wording, a candidate failing twice as often with one of them.

The modes found must match the planted types (adjusted Rand index >= 0.8, scikit-learn), each type's key word
must be in its mode's name, the doubled type must be flagged (Holm p < 0.01) and no other; with equal rates no
type may be flagged in at least 95% of 40 seeds. The sentence model embeds the wordings once (the module's
first run); the 40 seeds reuse that run's grouping of each wording (the grouping of a text does not depend on
which cells drew it) and draw new cells for every seed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import adjusted_rand_score

from planted_failures import TYPES, draw, planted_rates, write_run
from textgen_core.failures import FailureModes, find_modes, stored_modes
from textgen_core.store import Store

N = 600


@pytest.fixture(scope="module")
def found(tmp_path_factory: pytest.TempPathFactory):
    store = Store(tmp_path_factory.mktemp("planted") / "planted.duckdb")
    rng = np.random.default_rng(7)
    truth = draw(N, planted_rates(0.1, "refund"), rng)
    planted = write_run(store, N, truth, rng, unscored=20)
    modes = find_modes(store, planted.run_id, seed=0)
    return store, planted, modes


def _mode_of_type(modes: FailureModes, truth: dict) -> dict[str, int]:
    """Each planted type's mode: the mode most of its judgements fell in."""
    members = modes.members.assign(kind=[truth[(d, m)] for d, m in zip(modes.members["datum_id"],
                                                                          modes.members["model"])])
    return members.groupby("kind")["mode"].agg(lambda s: int(s.mode().iloc[0])).to_dict()


def test_the_modes_match_the_planted_types(found) -> None:
    store, planted, modes = found
    members = modes.members
    assert len(members) == len(planted.truth)  # every planted failure, nothing else (no passing, no unscored cell)
    texts = store.failures.failure_members(planted.run_id)["text"]  # the grouped texts, as stored
    assert len(texts) == len(members) and not texts.str.contains("UNSCORED").any()
    kinds = [planted.truth[(d, m)] for d, m in zip(members["datum_id"], members["model"])]
    ari = adjusted_rand_score(kinds, members["mode"])
    assert ari >= 0.8, ari


def test_each_type_names_its_mode(found) -> None:
    _, planted, modes = found
    by_type = _mode_of_type(modes, planted.truth)
    assert len(set(by_type.values())) == len(TYPES)  # five types, five different modes
    names = dict(zip(modes.modes["mode"], modes.modes["name"]))
    for kind, mode in by_type.items():
        assert TYPES[kind][0] in names[mode].replace("/", " ").split(), (kind, names[mode])


def test_the_doubled_type_is_flagged_and_no_other(found) -> None:
    _, planted, modes = found
    table = modes.compare("base", ["cand"])
    by_type = _mode_of_type(modes, planted.truth)
    flagged = set(table.loc[table["flagged"], "mode"])
    refund = table[table["mode"] == by_type["refund"]].iloc[0]
    assert refund["p_holm"] < 0.01 and refund["difference"] > 0 and refund["low"] > 0
    assert flagged == {by_type["refund"]}
    assert table.attrs["family"] == len(table)


def test_stored_modes_read_back_without_grouping(found) -> None:
    store, planted, modes = found
    again = stored_modes(store, planted.run_id)
    pd.testing.assert_frame_equal(again.modes, modes.modes)
    pd.testing.assert_frame_equal(again.members, modes.members)
    assert again.params["method"] == "failures/1" and again.params["seed"] == 0
    assert again.params["failing"] == len(planted.truth)
    rates = again.rates()
    cells = rates[rates["mode"] >= 0].groupby("model")["cells"].first().to_dict()
    assert cells == {"base": N - 20, "cand": N - 20}  # unscored cells are not counted as cells either


def test_equal_rates_flag_nothing_in_95_percent_of_40_seeds(found) -> None:
    store, planted, modes = found
    stored = store.failures.failure_members(planted.run_id)  # with the grouped texts
    by_text = dict(zip(stored["text"], stored["mode"]))  # the grouping of each wording, reused
    pools = {kind: sorted({t for t, k in _texts_by_kind(stored, planted.truth).items() if k == kind})
             for kind in TYPES}
    cells = pd.DataFrame([(f"d{i:05d}", m, "qa_grade") for i in range(N) for m in ("base", "cand")],
                         columns=["datum_id", "model", "unit"])  # the same cells in every seed
    clean = 0
    for seed in range(40):
        rng = np.random.default_rng(1000 + seed)
        truth = draw(N, planted_rates(0.1, None), rng)
        rows = []
        for (datum, model), kind in truth.items():
            text = pools[kind][int(rng.integers(len(pools[kind])))]
            rows.append((by_text[text], datum, model, "qa_grade", "qa_grade", 0, text))
        members = pd.DataFrame(rows, columns=["mode", "datum_id", "model", "unit", "step", "item_index", "text"])
        table = FailureModes(0, modes.modes, members, cells.copy()).compare("base", ["cand"])
        clean += not table["flagged"].any()
    assert clean >= 38, clean


def _texts_by_kind(members: pd.DataFrame, truth: dict) -> dict[str, str]:
    return {t: truth[(d, m)] for t, d, m in zip(members["text"], members["datum_id"], members["model"])}
