"""text_table writes text-and-integer tables itself; the layout must be pandas' ``to_string(index=False)``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from textgen_core import formatting
from textgen_core.formatting import text_table


def _pandas_layout(frame: pd.DataFrame) -> str:
    """What text_table printed before it wrote the layout itself: the same table through pandas' to_string."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(formatting, "_plain_layout", lambda table: None)
        return text_table(frame)


def _random_frame(rng: np.random.Generator) -> pd.DataFrame:
    rows = int(rng.integers(1, 30))
    words = ["", "a", "model-b", "ünïcode ✓", "run 12", "0.25 [0.1, 0.4]", "too few (3 values)", "  padded "]
    frame: dict[str, object] = {}
    for i in range(int(rng.integers(1, 7))):
        kind = int(rng.integers(5))
        name = ["c", "long column name ", "n", "lists", "x"][kind] + str(i)
        if kind == 0:
            frame[name] = [words[j] for j in rng.integers(len(words), size=rows)]
        elif kind == 1:
            frame[name] = rng.integers(-10**6, 10**6, size=rows)
        elif kind == 2:
            frame[name] = rng.integers(0, 10 ** int(rng.integers(1, 9)), size=rows)
        elif kind == 3:
            frame[name] = [["x", "y"][: int(j)] for j in rng.integers(3, size=rows)]
        else:
            frame[name] = rng.integers(-5, 5, size=rows).astype(np.int32)
    return pd.DataFrame(frame)


@pytest.mark.parametrize("seed", range(300))
def test_the_direct_layout_equals_pandas(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    frame = _random_frame(np.random.default_rng(seed))
    expected = _pandas_layout(frame)
    with monkeypatch.context() as patch:  # the direct layout is the one used: pandas' would raise
        patch.setattr(pd.DataFrame, "to_string", lambda *_, **__: pytest.fail("pandas' layout was used"))
        assert text_table(frame) == expected


@pytest.mark.parametrize("frame", [
    pd.DataFrame({"x": [0.5, 1.25], "n": [1, 2]}),  # floats: pandas' number formatting
    pd.DataFrame({"flag": [True, False]}),
    pd.DataFrame({"n": pd.array([1, 10], dtype="Int64")}),  # nullable integers: pandas pads them its own way
    pd.DataFrame({"n": pd.array([1, None], dtype="Int64"), "t": ["a", "b"]}),
    pd.DataFrame({"text": ["a\tb", "c"], "n": [3, 4]}),  # pandas escapes tabs and line breaks
    pd.DataFrame({"when": pd.to_datetime(["2026-11-27 10:00:00"])}),
    pd.DataFrame({"a": pd.Series([], dtype=object), "n": pd.Series([], dtype=int)}),  # empty
    pd.DataFrame({"a": [None, "x"], "n": [1, 2]}),
])
def test_anything_else_keeps_pandas_layout(frame: pd.DataFrame) -> None:
    assert text_table(frame) == _pandas_layout(frame)
