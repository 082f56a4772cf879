"""What a run's exports hold: `textgen-eval export`, `run --out` and :func:`textgen_core.api.export_run`.

Every table is keyed by ``datum_id`` and ``model`` (as the verdicts, the labels
and the failure modes are) and says what each row is about: the query, the
prediction, the references and the dataset's metadata columns, then the scores.

- :func:`wide_export`: one row per (datum, model), one column per score;
- :func:`long_export`: one row per score cell, with its details, the reason it is
  unscored and the signature of the settings that produced it;
- :func:`modes_export`: one row per failing judgement the run's stored failure
  modes grouped (``textgen-eval failures``), with its mode's number, name and words.

When the run has stored failure modes, the wide and long tables carry a
``failure_modes`` column: the names of the modes a row's (or a cell's) failing
judgements were grouped into, empty when none were. Modes are read as stored,
never grouped here. Unscored cells are never members of a mode.
Nothing of the judge's settings but what the run stored reaches a table: no key.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from .store import Store
from .summary import long_scores, scores_with_texts

#: Columns that say what a row is about, after its key.
TEXT_COLUMNS = ("query", "prediction", "references")


def wide_export(store: Store, run_id: int) -> pd.DataFrame:
    """datum_id, model, query, prediction, references, metadata columns, one column per score, and
    ``failure_modes`` when the run has stored modes."""
    frame = scores_with_texts(store, run_id)
    members = _members(store, run_id)
    if members is None:
        return frame
    names = members.groupby(["datum_id", "model"], sort=False)["label"].agg(lambda s: list(dict.fromkeys(s)))
    keys = list(zip(frame["datum_id"], frame["model"]))
    frame["failure_modes"] = [names.get(key, []) for key in keys]
    return frame


def long_export(store: Store, run_id: int) -> pd.DataFrame:
    """datum_id, model, metric, score, value, details, reason, signature, then what the row is about (query,
    prediction, references, metadata columns), and ``failure_modes`` when the run has stored modes."""
    cells = long_scores(store, run_id)
    texts = scores_with_texts(store, run_id)
    about = [c for c in texts.columns if c in TEXT_COLUMNS or c not in set(cells["score"]) | {"datum_id", "model"}]
    frame = cells.merge(texts[["datum_id", "model", *about]], on=["datum_id", "model"], how="left")
    members = _members(store, run_id)
    if members is not None:
        names: dict[tuple[str, str, str], list[str]] = {}
        for datum_id, model, unit, label in zip(members["datum_id"], members["model"], members["unit"],
                                                members["name"]):
            found = names.setdefault((datum_id, model, unit), [])
            if label not in found:
                found.append(label)
        frame["failure_modes"] = [
            list(dict.fromkeys(names.get((d, m, metric), []) + names.get((d, m, score), [])))
            for d, m, metric, score in zip(frame["datum_id"], frame["model"], frame["metric"], frame["score"])]
    return frame


def modes_export(store: Store, run_id: int) -> pd.DataFrame:
    """One row per failing judgement grouped into a stored mode: mode, mode_name, mode_words, datum_id, model,
    unit (the metric or score it fails), step, item (numbered from 1), text. Empty when no modes are stored."""
    store.get_run(run_id)  # a clear error for an unknown run
    members = _members(store, run_id, text=True)
    columns = ["mode", "mode_name", "mode_words", "datum_id", "model", "unit", "step", "item", "text"]
    if members is None:
        return pd.DataFrame(columns=columns)
    members = members.rename(columns={"name": "mode_name", "words": "mode_words"})
    members["item"] = members["item_index"] + 1
    return members[columns].reset_index(drop=True)


def _members(store: Store, run_id: int, *, text: bool = False) -> pd.DataFrame | None:
    """The stored members of a run's modes with their mode's name and words (``label``: 'unit: name'), or None
    when the run has no stored modes."""
    modes = store.failures.failure_modes(run_id)
    if modes.empty:
        return None
    members = store.failures.failure_members(run_id, text=text)
    members = members.merge(modes[["mode", "name", "words"]], on="mode", how="left")
    members["words"] = [_words(w) for w in members["words"]]
    members["label"] = [f"{unit}: {name}" for unit, name in zip(members["unit"], members["name"])]
    return members


def _words(value: Any) -> list[str]:
    return [] if value is None or (isinstance(value, float) and value != value) else [str(w) for w in value]
