"""A streamed write's DuckDB settings (memory limit, one thread beside the pool workers) hold during the write
and are put back after it, also when the write fails."""

from __future__ import annotations

import pytest

from textgen_core.errors import StoreError
from textgen_core.store import Store


_UNITS = {"KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}


def _settings(store: Store) -> tuple[float, int]:
    """(memory limit in MiB, threads)."""
    memory, threads = store.streams.cur.execute(
        "SELECT current_setting('memory_limit'), current_setting('threads')").fetchone()
    number, unit = memory.split()
    mib = float(number) * _UNITS[unit.upper()] / 2**20
    return mib, int(threads)


def _same(now: tuple[float, int], before: tuple[float, int]) -> bool:
    """The same threads, and the same memory limit as DuckDB prints it (with one decimal of its unit: read back
    and set again it may lose that last digit)."""
    return now[1] == before[1] and abs(now[0] - before[0]) <= 0.01 * before[0]


def test_write_settings_hold_during_the_write_and_are_restored(tmp_path) -> None:
    store = Store(tmp_path / "s.duckdb")
    with store.session():
        before = _settings(store)
        with store.streams.memory_limit("64MB", threads=1):
            memory, threads = store.streams.cur.execute(
                "SELECT current_setting('memory_limit'), current_setting('threads')").fetchone()
            assert int(threads) == 1 and memory in ("61.0 MiB", "64.0 MiB")
        assert _same(after := _settings(store), before)
        with pytest.raises(RuntimeError), store.streams.memory_limit("64MB", threads=1):
            raise RuntimeError("the write failed")
        assert _same(after := _settings(store), after) and after[1] == before[1]
        with store.streams.memory_limit("64MB"):  # threads not given: DuckDB's own count stays
            assert _settings(store)[1] == before[1]
        with pytest.raises(StoreError, match="not a memory size"), store.streams.memory_limit("lots", threads=1):
            pass
        assert _same(_settings(store), after)
