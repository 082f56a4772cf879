"""Longest common subsequence, bit-parallel, with rouge-score's exact backtracking.

Rows of the classic LCS table are kept as Python integers (Allison-Dix /
Hyyro): bit ``j`` of row ``i`` is 0 exactly where ``T[i][j+1] = T[i][j] + 1``,
so ``T[i][j] = j - popcount(row_i & (2**j - 1))`` and one table row costs a
handful of big-integer operations instead of a Python loop over columns.
"""

from __future__ import annotations

from typing import Sequence


def match_masks(tokens: Sequence[str]) -> dict[str, int]:
    """For each distinct token, an integer with bit j set where ``tokens[j]`` is that token."""
    masks: dict[str, int] = {}
    get = masks.get
    bit = 1
    for token in tokens:
        masks[token] = get(token, 0) | bit
        bit <<= 1
    return masks


def lcs_length(rows: Sequence[str], columns: Sequence[str], masks: dict[str, int] | None = None) -> int:
    """Length of the LCS of two token sequences; ``masks`` are ``match_masks(columns)`` if given."""
    if not rows or not columns:
        return 0
    if masks is None:
        masks = match_masks(columns)
    get = masks.get
    v = (1 << len(columns)) - 1
    full = v
    for token in rows:
        m = get(token)
        if m:
            u = v & m
            v = (v + u) | (v - u)
    return len(columns) - (v & full).bit_count()


def lcs_indices(ref: Sequence[str], can: Sequence[str], masks: dict[str, int]) -> list[int]:
    """Positions in ``ref`` of the LCS that rouge-score's table backtracking reads out.

    From the bottom-right corner: equal tokens step diagonally (and are kept);
    otherwise step left when the left cell is strictly larger, else up. The
    table cells come from the bit-parallel rows, so this walks the same path.
    """
    n = len(can)
    get = masks.get
    v = (1 << n) - 1
    history = [v]
    for token in ref:
        m = get(token)
        if m:
            u = v & m
            v = (v + u) | (v - u)
        history.append(v)
    if (v & ((1 << n) - 1)).bit_count() == n:
        return []
    kept: list[int] = []
    i = len(ref)
    j = n
    while i > 0 and j > 0:
        if ref[i - 1] == can[j - 1]:
            i -= 1
            j -= 1
            kept.append(i)
            continue
        low = (1 << (j - 1)) - 1
        left = (j - 1) - (history[i] & low).bit_count()
        up = j - (history[i - 1] & (low | (1 << (j - 1)))).bit_count()
        if left > up:
            j -= 1
        else:
            i -= 1
    return kept


def summary_hits(
    ref_lines: Sequence[Sequence[str]],
    can_lines: Sequence[Sequence[str]],
    ref_counts: dict[str, int],
    can_counts: dict[str, int],
) -> int:
    """Summary-level LCS hits as rouge-score counts them (union LCS per reference line, no double counting)."""
    left_ref = dict(ref_counts)
    left_can = dict(can_counts)
    prepared = [(can, match_masks(can), frozenset(can)) for can in can_lines if can]
    hits = 0
    for ref in ref_lines:
        if not ref:
            continue
        ref_set = frozenset(ref)
        union: set[int] = set()
        for can, masks, can_set in prepared:
            if ref_set.isdisjoint(can_set):
                continue
            union.update(lcs_indices(ref, can, masks))
        for i in union:
            token = ref[i]
            if left_can.get(token, 0) > 0 and left_ref.get(token, 0) > 0:
                hits += 1
                left_can[token] -= 1
                left_ref[token] -= 1
    return hits
