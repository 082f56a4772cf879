"""The bundled sample dataset and a short summary of any dataset."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..model import TEXT_FIELDS, Dataset
from .loader import load_dataset

SAMPLE_NAME = "sample-qa"
_DATA_DIR = Path(__file__).resolve().parent.parent / "data"


def sample_dataset_path() -> Path:
    """Where the bundled sample CSV lives (inside the installed package)."""
    return _DATA_DIR / "sample_qa.csv"


def load_sample() -> Dataset:
    """The bundled general-knowledge QA sample: two models, references, contexts and human ratings."""
    return load_dataset(sample_dataset_path(), name=SAMPLE_NAME)


def dataset_summary(dataset: Dataset) -> dict[str, Any]:
    """Counts a UI shows next to a dataset: rows, datums, models, fields present, metadata columns."""
    per_model: dict[str, int] = {}
    models_of: dict[str, int] = {}
    for row in dataset.rows:
        per_model[row.model] = per_model.get(row.model, 0) + 1
        models_of[row.datum_id] = models_of.get(row.datum_id, 0) + 1
    return {
        "name": dataset.name,
        "source": dataset.source,
        "rows": len(dataset.rows),
        "datums": len(models_of),
        #: datums that more than one model answered: what a paired comparison can use
        "paired_datums": sum(1 for n in models_of.values() if n > 1),
        "models": list(per_model),
        "rows_per_model": per_model,
        "fields": [name for name in TEXT_FIELDS if dataset.has_field(name)],
        "metadata_columns": list(dataset.metadata_columns),
        "warnings": list(dataset.warnings),
    }
