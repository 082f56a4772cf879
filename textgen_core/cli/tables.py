"""Plain-text tables for the terminal."""

from __future__ import annotations

from ..store import Store
from ..summary import summary_table


def print_summary(store: Store, run_id: int) -> None:
    table = summary_table(store, run_id)
    if table.empty:
        print("no scores")
        return
    print(table.to_string())
