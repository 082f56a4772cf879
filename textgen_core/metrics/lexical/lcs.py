"""Longest common subsequence, bit-parallel, with rouge-score's exact backtracking.

Rows of the classic LCS table are kept as Python integers (Allison-Dix /
Hyyro): bit ``j`` of row ``i`` is 0 exactly where ``T[i][j+1] = T[i][j] + 1``,
so ``T[i][j] = j - popcount(row_i & (2**j - 1))`` and one table row costs a
handful of big-integer operations instead of a Python loop over columns.
"""

from __future__ import annotations

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
            masks[token] = get(token, 0) | bit
        return masks
    bit = 1
    for token in tokens:
        masks[token] = get(token, 0) | bit
        bit <<= 1
    return masks


def _lows(n: int) -> list[int]:
    """[2**j - 1 for j in 0..n]."""
    return _LOW[: n + 1] if n < len(_LOW) else [(1 << j) - 1 for j in range(n + 1)]


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


class _Lines:
    """Candidate lines packed side by side in one integer, a zero guard bit between them."""

    __slots__ = ("lines", "offsets", "masks", "lows", "plain", "all")

    def __init__(self, lines: Sequence[Sequence[str]]) -> None:
        self.lines = [line for line in lines if line]
        packed: list[str] = []
        self.offsets = []
        for line in self.lines:
            self.offsets.append(len(packed))
            packed.extend(line)
            packed.append(_GUARD)
        self.masks = match_masks(packed)
        self.masks.pop(_GUARD, None)
        self.plain = [_lows(len(line)) for line in self.lines]
        self.lows = [[low << off for low in plain] for plain, off in zip(self.plain, self.offsets)]
        self.all = 0
        for low in self.lows:
            self.all |= low[-1]


def _union_lcs(ref: Sequence[str], packed: _Lines) -> set[int]:
    """Union over candidate lines of the positions in ``ref`` that rouge-score's backtracking keeps.

    rouge-score walks each table from the bottom-right corner: equal tokens
    step diagonally (and are kept); otherwise it steps left when the left
    cell is strictly larger than the upper one, else up. A non-matching cell
    is the larger of those two, so: up when the upper cell still equals the
    current value T, else left - and then left again until the next equal
    token of the row, which the line's masks give at once. The walk ends when
    T reaches 0.
    """
    get = packed.masks.get
    full = packed.all
    v = full
    history = [v]
    for token in ref:
        m = get(token)
        if m:
            u = v & m
            v = ((v + u) | (v - u)) & full
        history.append(v)
    kept: set[int] = set()
    masks = packed.masks
    for can, off, lows, plain in zip(packed.lines, packed.offsets, packed.lows, packed.plain):
        j = len(can)
        left = j - (v & lows[j]).bit_count()
        i = len(ref)
        while left:
            token = ref[i - 1]
            if token == can[j - 1]:
                i -= 1
                j -= 1
                left -= 1
                kept.add(i)
            elif j - (history[i - 1] & lows[j]).bit_count() == left:
                i -= 1
            else:
                j = ((masks[token] >> off) & plain[j - 1]).bit_length()
    return kept


def summary_hits(
    ref_lines: Sequence[Sequence[str]],
    can_lines: Sequence[Sequence[str]],
    ref_counts: Mapping[str, int],
    can_counts: Mapping[str, int],
) -> int:
    """Summary-level LCS hits as rouge-score counts them (union LCS per reference line, no double counting)."""
    left_ref = dict(ref_counts)
    left_can = dict(can_counts)
    packed = _Lines(can_lines)
    hits = 0
    for ref in ref_lines:
        if not ref:
            continue
        for i in _union_lcs(ref, packed):
            token = ref[i]
            if left_can.get(token, 0) > 0 and left_ref.get(token, 0) > 0:
                hits += 1
                left_can[token] -= 1
                left_ref[token] -= 1
    return hits
