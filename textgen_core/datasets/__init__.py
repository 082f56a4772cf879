"""Reading user datasets (CSV, JSON Lines, Parquet or a DataFrame) into the normalized model.

Every problem with the input is an :class:`~textgen_core.errors.InputError` that
names the file, the 1-based data row and the column.
"""

from .loader import load_dataset
from .mapping import ColumnMapping, guess_mapping
from .reader import EXTENSIONS, read_table
from .sample import SAMPLE_NAME, dataset_summary, load_sample, sample_dataset_path

__all__ = [
    "ColumnMapping",
    "EXTENSIONS",
    "SAMPLE_NAME",
    "dataset_summary",
    "guess_mapping",
    "load_dataset",
    "load_sample",
    "read_table",
    "sample_dataset_path",
]
