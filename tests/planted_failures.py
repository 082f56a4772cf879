"""A generated judged run with planted failure types: the judge's reasons come from five kinds of failure,
each written in varied wording; a candidate can fail with one kind more often than the baseline.

Used by tests/failures and bench/failures.py. The run is written through the store's own write paths
(dataset, run, and the judge's batch writer: cells with their verdicts), as a judged run is.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from textgen_core.judge.storage import CellWrite
from textgen_core.model import Dataset, Datum
from textgen_core.store import Store

#: Each failure type: its key word (which must name its mode) and its phrasings ({0}: a varying subject).
TYPES: dict[str, tuple[str, tuple[str, ...]]] = {
    "refund": ("refund", (
        "The answer invents a refund policy for {0} that the shop never had.",
        "It makes up a refund rule about {0}; no such refund exists.",
        "A refund for {0} is promised although the policy offers none.",
        "The reply claims {0} can be returned for a full refund, which is fabricated.",
        "Fabricated refund terms: the customer is told {0} qualifies for a refund.",
        "States a thirty-day refund window for {0} that is not in the policy.",
    )),
    "question": ("question", (
        "The answer responds to a different question than the one asked about {0}.",
        "It addresses another question entirely instead of {0}.",
        "Off target: the user's question concerned {0}, but the reply answers a related question.",
        "Misreads the question and talks about something other than {0}.",
        "The response answers the wrong question; {0} is never addressed.",
        "It sidesteps the actual question about {0} and answers an easier question.",
    )),
    "refuses": ("refuses", (
        "The model refuses to answer the request about {0}.",
        "It refuses outright, saying it cannot help with {0}.",
        "The assistant refuses and gives no information on {0}.",
        "Refuses to respond: claims {0} is outside what it may discuss.",
        "The reply refuses the task about {0} citing a policy that does not apply.",
        "It politely refuses, offering nothing about {0}.",
    )),
    "date": ("date", (
        "The date given for {0} is wrong; the reference gives another date.",
        "Wrong date: the answer places {0} in the wrong year.",
        "It reports an incorrect date for {0}.",
        "The stated date of {0} contradicts the date in the reference.",
        "Gets the date of {0} wrong by several months.",
        "The answer's date for {0} is off; the correct date differs.",
    )),
    "calculation": ("calculation", (
        "The calculation of the total for {0} is wrong.",
        "An arithmetic calculation error: the sum for {0} does not add up.",
        "It miscomputes {0}; the calculation gives the wrong number.",
        "The calculation behind the figure for {0} is incorrect.",
        "Wrong calculation: the percentage for {0} is computed incorrectly.",
        "The numbers for {0} come from a faulty calculation.",
    )),
}
#: Subjects: every wording of every type gets its own (adjective, thing), so no subject is shared by two wordings.
ADJECTIVES = ("blue", "winter", "garden", "folding", "travel", "wireless", "leather", "kitchen", "vintage", "compact",
              "electric", "wooden", "silver", "outdoor", "children's")
THINGS = ("kettle", "jacket", "chair", "phone case", "desk lamp", "yoga mat", "coffee grinder", "hiking boots",
          "train ticket", "concert pass", "backpack", "umbrella", "blender", "bicycle", "watch", "sofa", "printer",
          "scarf", "tent", "speaker")
PER_TYPE = 60
#: Reasons of passing verdicts (not failures; they must never be grouped).
PASSING = ("The answer matches the reference.", "Correct: it gives what the reference gives.",
           "The reply agrees with the reference answer.")


def _subjects() -> list[str]:
    pairs = [f"the {a} {t}" for a, t in itertools.product(ADJECTIVES, THINGS)]
    order = np.random.default_rng(12345).permutation(len(pairs))
    return [pairs[i] for i in order]


def phrasings(kind: str) -> list[str]:
    """The ``PER_TYPE`` distinct wordings of one failure type (its phrasings in turn, each with its own subject)."""
    index = list(TYPES).index(kind)
    subjects = _subjects()[index * PER_TYPE:(index + 1) * PER_TYPE]
    templates = TYPES[kind][1]
    return [templates[i % len(templates)].format(s) for i, s in enumerate(subjects)]


def all_phrasings() -> tuple[list[str], list[str]]:
    """(texts, planted type of each), every type's wordings."""
    texts, kinds = [], []
    for kind in TYPES:
        for text in phrasings(kind):
            texts.append(text)
            kinds.append(kind)
    return texts, kinds


@dataclass
class Planted:
    run_id: int
    #: (datum_id, model) -> the planted type of its failure (cells that did not fail are absent).
    truth: dict[tuple[str, str], str]


def draw(n: int, rates: dict[str, dict[str, float]], rng: np.random.Generator) -> dict[tuple[str, str], str]:
    """Which (datum, model) cells fail with which type: each model draws one type or none per datum."""
    truth: dict[tuple[str, str], str] = {}
    for model, by_type in rates.items():
        kinds = list(by_type)
        p = np.array([by_type[k] for k in kinds] + [1.0 - sum(by_type.values())])
        picks = rng.choice(len(p), size=n, p=p)
        for i, pick in enumerate(picks):
            if pick < len(kinds):
                truth[(f"d{i:05d}", model)] = kinds[pick]
    return truth


def planted_rates(base: float = 0.1, doubled: str | None = "refund", models: Sequence[str] = ("base", "cand")
                  ) -> dict[str, dict[str, float]]:
    """Every type at ``base`` for every model; the last model has twice the rate of ``doubled``."""
    out = {m: {k: base for k in TYPES} for m in models}
    if doubled is not None:
        out[models[-1]][doubled] = 2 * base
    return out


def write_run(store: Store, n: int, truth: dict[tuple[str, str], str], rng: np.random.Generator,
              models: Sequence[str] = ("base", "cand"), unscored: int = 0) -> Planted:
    """A qa_grade run of ``n`` datums x ``models``: a planted failure is an INCORRECT verdict with a reason of its
    type; ``unscored`` cells per model are unscored although a failing verdict was stored for them."""
    rows = [Datum(f"d{i:05d}", m, query=f"q{i}", prediction=f"answer {i} of {m}", references=(f"ref {i}",))
            for i in range(n) for m in models]
    dataset_id = store.save_dataset(Dataset(f"planted-{rng.integers(1 << 30)}", rows))
    run_id = store.create_run(dataset_id, ["qa_grade"], {"qa_grade": {}}, {}, list(models), kind="stored")
    pools = {k: phrasings(k) for k in TYPES}
    cells = []
    for i in range(n):
        for m in models:
            datum = f"d{i:05d}"
            kind = truth.get((datum, m))
            if int(i) < unscored:
                cells.append(CellWrite(run_id, (datum, m, "qa_grade", "qa_grade", None, None, "judge reply unusable"),
                                       [(datum, m, "qa_grade", "qa_grade", 0, "answer", "INCORRECT",
                                         "UNSCORED CELL REASON never grouped", None)], [], False))
                continue
            if kind is None:
                reason, verdict, value = PASSING[int(rng.integers(len(PASSING)))], "CORRECT", 1.0
            else:
                pool = pools[kind]
                reason, verdict, value = pool[int(rng.integers(len(pool)))], "INCORRECT", 0.0
            cells.append(CellWrite(run_id, (datum, m, "qa_grade", "qa_grade", value, {"grade": verdict}, None),
                                   [(datum, m, "qa_grade", "qa_grade", 0, "answer", verdict, reason, None)], [], False))
    store.judge.write_judge_batch([], cells)
    store.set_run_status(run_id, "finished")
    return Planted(run_id, {k: v for k, v in truth.items() if int(k[0][1:]) >= unscored})
