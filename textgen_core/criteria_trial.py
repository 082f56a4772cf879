"""Try a custom judge metric on a few rows before saving it: real judge calls, nothing kept.

The rows are scored by the same engine as a run (prompt, schema, re-ask,
unscored with a reason), but in a throwaway in-memory database: no dataset,
run, score, verdict or cached reply reaches any file.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import pandas as pd

from .evaluate import evaluate
from .judge.metrics.criteria import Criterion, define
from .judge.engine import exchange
from .model import Dataset, Datum
from .store import Store

#: Rows a trial scores at most.
TRIAL_ROWS = 5

TRIAL_COLUMNS = ["datum_id", "model", "prediction", "value", "verdict", "reason", "unscored", "reply"]


def try_criterion(definition: "Mapping[str, Any] | Criterion", rows: Sequence[Datum], judge: Any) -> pd.DataFrame:
    """Score the first :data:`TRIAL_ROWS` of ``rows`` with ``definition``: per row the value, the judge's
    verdict and reason (or why the cell is unscored) and its raw reply. Nothing is stored."""
    spec = define(definition, "trial")
    picked = list(rows)[:TRIAL_ROWS]
    if not picked:
        return pd.DataFrame(columns=TRIAL_COLUMNS)
    scratch = Store(":memory:")
    try:
        dataset_id = scratch.save_dataset(Dataset("trial", picked), "trial")
        run_id = evaluate(scratch, dataset_id, [spec.name], judge=judge, workers=1)
        scores = {(r.datum_id, r.model): r for r in scratch.scores(run_id).itertuples()}
        out = []
        for row in picked:
            cell = scores.get((row.datum_id, row.model))
            verdicts = scratch.verdicts(run_id, row.datum_id, row.model)
            first = verdicts.iloc[0] if len(verdicts) else None
            shown = exchange(scratch, first["cache_key"]) if first is not None and first["cache_key"] else None
            value = None if cell is None or cell.value != cell.value else float(cell.value)
            out.append({"datum_id": row.datum_id, "model": row.model, "prediction": row.prediction, "value": value,
                        "verdict": None if first is None else first["verdict"],
                        "reason": None if first is None else first["reason"],
                        "unscored": None if cell is None or not isinstance(cell.reason, str) else cell.reason,
                        "reply": None if shown is None else shown.get("reply")})
        return pd.DataFrame(out, columns=TRIAL_COLUMNS)
    finally:
        scratch.close()
