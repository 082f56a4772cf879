"""Longest common subsequence, bit-parallel, with rouge-score's exact backtracking.

Rows of the classic LCS table are kept as Python integers (Allison-Dix /
Hyyro): bit ``j`` of row ``i`` is 0 exactly where ``T[i][j+1] = T[i][j] + 1``,
so ``T[i][j] = j - popcount(row_i & (2**j - 1))`` and one table row costs a
handful of big-integer operations instead of a Python loop over columns.
"""

from __future__ import annotations

import operator
from collections import Counter
from itertools import compress, repeat
from typing import Mapping, Sequence

_BITS = [1 << j for j in range(2048)]
_LOW = [(1 << j) - 1 for j in range(2049)]  # _LOW[j]: the j lowest bits set
_GUARD = ""  # never a token: separates lines packed into one integer


def match_masks(tokens: Sequence[str]) -> dict[str, int]:
    """For each distinct token, an integer with bit j set where ``tokens[j]`` is that token."""
    masks: dict[str, int] = {}
    get = masks.get
    if len(tokens) <= len(_BITS):
        for token, bit in zip(tokens, _BITS):
            mask = get(token)
            # A first occurrence stores the shared bit itself: no new integer (most tokens occur once).
            masks[token] = bit if mask is None else mask | bit
        return masks
    bit = 1
    for token in tokens:
        masks[token] = get(token, 0) | bit
        bit <<= 1
    return masks


def lcs_length(rows: Sequence[int], width: int) -> int:
    """LCS length from ``rows``: for each token of one sequence, the mask of its positions in the other.

    ``width`` is the length of that other sequence.
    """
    v = _LOW[width] if width < len(_LOW) else (1 << width) - 1
    full = v
    for m in rows:
        if m:
            u = v & m
            v = (v + u) | (v - u)
    return width - (v & full).bit_count()


def _low_bits(n: int) -> list[int]:
    """The table of 2**j - 1, long enough for sequences of ``n`` tokens."""
    while len(_LOW) <= n:
        _LOW.append((1 << len(_LOW)) - 1)
    return _LOW


def summary_hits(
    ref_lines: Sequence[Sequence[str]], can_lines: Sequence[Sequence[str]], can_masks: Mapping[str, int]
) -> int:
    """Summary-level LCS hits exactly as rouge-score counts them.

    ``can_masks`` are the match masks of the candidate's tokens end to end
    (its lines concatenated). rouge-score takes, for each reference line, the
    union over candidate lines of the LCS positions its table backtracking
    reads out, and counts each union token while both texts still have that
    token left. A union position is a distinct reference position, so a
    token's hits are min(its count in the unions, its count in the candidate).

    The reference lines are packed side by side in one integer, a zero guard
    bit between them, and one bit-parallel pass per candidate line yields the
    LCS table columns of every reference line at once (bit k of column j is 0
    where the value rises at row k+1). rouge-score's walk from the
    bottom-right corner keeps equal tokens diagonally, else steps left when
    the left cell is strictly larger than the upper one, else up. In those
    terms: up while the column does not rise, to the first row that is an
    equal token (kept) or where the column rises; from there left, to the
    row's previous equal token. Each run is one jump, read off the masks.
    """
    refs = [line for line in ref_lines if line]
    if not refs:
        return 0
    packed: list[str] = []
    offsets = []
    for line in refs:
        offsets.append(len(packed))
        packed.extend(line)
        packed.append(_GUARD)
    low = _low_bits(len(packed))
    ref_masks = match_masks(packed)
    ref_masks.pop(_GUARD, None)
    full = 0
    for line, off in zip(refs, offsets):
        full |= low[len(line)] << off
    rget = ref_masks.get
    unions: list[set[int]] = [set() for _ in refs]
    start = 0
    for can in can_lines:
        if not can:
            continue
        base = start
        start += len(can)
        v = full
        columns = [v]
        for token in can:
            m = rget(token)
            if m:
                u = v & m
                v = ((v + u) | (v - u)) & full
            columns.append(v)
        for ref, off, kept in zip(refs, offsets, unions):
            i = len(ref)
            left = i - ((v >> off) & low[i]).bit_count()  # LCS length
            j = len(can)
            while left:
                token = ref[i - 1]
                other = can[j - 1]
                if token == other:
                    i -= 1
                    j -= 1
                    left -= 1
                    kept.add(i)
                    continue
                column = columns[j] >> off
                if (column >> (i - 1)) & 1:
                    # Up: stop at the first row above that is an equal token or where the column rises.
                    stop = (((rget(other, 0) >> off) | ~column) & low[i - 1]).bit_length() - 1
                    if ref[stop] == other:
                        i = stop
                        j -= 1
                        left -= 1
                        kept.add(stop)
                        continue
                    i = stop + 1
                    token = ref[stop]
                # Left: to the previous equal token of this row.
                j = ((can_masks[token] >> base) & low[j - 1]).bit_length()
    found: Counter = Counter()
    for ref, kept in zip(refs, unions):
        found.update(map(ref.__getitem__, kept))  # type: ignore[attr-defined]
    hits = sum(found.values())
    for token in compress(found, map(operator.lt, repeat(1), found.values())):
        excess = found[token] - can_masks[token].bit_count()
        if excess > 0:
            hits -= excess
    return hits
