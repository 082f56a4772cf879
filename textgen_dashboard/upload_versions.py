"""The Upload page's dataset versions: what a save made of the file (a new version with what changed since the one
before, or the version already stored with the same content), and the list of a named dataset's versions with
the runs pinned to each."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from textgen_core.catalog import StoredVersion, diff_summary
from textgen_core.formatting import plain_table

from . import data
from .safe_text import plain
from .widgets import show_table


def saved_message(stored: StoredVersion, rows: int) -> str:
    """One sentence for the success box after a save (markdown: the names and the diff are escaped)."""
    family, name = plain(stored.family), plain(stored.name)
    if stored.reused:
        return (f"Same content as version {stored.version} of {family} (stored as {name}) — nothing "
                "stored again; runs of this file are pinned to that version.")
    text = f"Saved {name} ({rows:,} rows) as version {stored.version} of {family}."
    if stored.diff:
        text += f" Since version {stored.version - 1}: {plain(diff_summary(stored.diff))}."
    return text


def run_names(runs: pd.DataFrame, dataset_id: int) -> str:
    """'#3 week 1, #5' for the runs pinned to one stored dataset (oldest first)."""
    pinned = runs[runs["dataset_id"] == dataset_id].sort_values("run_id")
    return ", ".join(f"#{int(r.run_id)}" + (f" {r.name}" if isinstance(r.name, str) and r.name else "")
                     for r in pinned.itertuples())


def versions_section(dataset_id: int) -> None:
    """The versions of the named dataset ``dataset_id`` belongs to: version, stored id, rows, datums, models, date,
    the change since the version before, and the runs pinned to it."""
    versions = data.dataset_versions(dataset_id)
    if versions.empty:
        return
    family = str(versions["family"].iloc[0])
    runs = data.runs()
    table = pd.DataFrame({
        "version": versions["version"].astype(int), "dataset_id": versions["dataset_id"].astype(int),
        "name": versions["name"], "rows": versions["n_rows"].astype(int), "datums": versions["n_datums"].astype(int),
        "models": versions["models"].map(", ".join), "stored": versions["created_at"],
        "change": versions["change"],
        "runs pinned": [run_names(runs, int(i)) for i in versions["dataset_id"]]})
    st.markdown(f"**Versions of this dataset** ({len(table)})")
    show_table(plain_table(table), hide_index=True, placeholder="–")
    st.caption("A version is the content of its rows (ids, models, texts, metadata), not the file's name: the same "
               "content saved again is the same version. Each run is pinned to the version it scored; "
               "'textgen-eval datasets NAME --diff V1 V2' lists the datums that changed.")
