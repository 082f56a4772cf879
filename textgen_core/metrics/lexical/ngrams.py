"""N-gram overlaps shared by ROUGE-N, BLEU and GLEU, without building n-grams.

For two token sequences, give each token of the longer one a bit mask of its
positions; the shorter one becomes a list ``d`` of those masks, one per
position. The n-grams starting at position i occur in the longer sequence at
the set bits of ``d_n[i] = d_{n-1}[i] & (d_{n-1}[i+1] >> 1)``, so one order
costs two C-level ``map`` passes over small integers. Positions with the same
n-gram have the same (non-zero) mask and distinct n-grams have disjoint ones,
so the clipped overlap sum over n-grams of min(count here, count there) is
read off the masks: their multiplicities and popcounts.
"""

from __future__ import annotations

import operator
from array import array
from collections import Counter

try:
    from collections import _count_elements  # type: ignore[attr-defined]  # C helper behind Counter
except ImportError:  # pragma: no cover - other Python implementations
    def _count_elements(mapping: dict, iterable) -> None:  # type: ignore[no-redef]
        for element in iterable:
            mapping[element] = mapping.get(element, 0) + 1
from functools import lru_cache
from itertools import compress, repeat
from typing import Sequence

from .lcs import match_masks
from .tokenize import WORD_TOKENIZERS, TextCache

_and, _rshift, _lt = operator.and_, operator.rshift, operator.lt


class TokenText:
    """A token sequence with its unigram counts and position masks, built on first use."""

    __slots__ = ("tokens", "_counts", "_masks")

    def __init__(self, tokens: Sequence[str]) -> None:
        self.tokens = tokens
        self._counts: dict[int, Counter] | None = None
        self._masks: dict[str, int] | None = None

    def total(self, n: int) -> int:
        """How many n-grams (with repeats) the sequence has."""
        size = len(self.tokens) - n + 1
        return size if size > 0 else 0

    def counts(self, n: int = 1) -> Counter:
        """Occurrences of each n-gram (unigrams keyed by the token itself)."""
        if self._counts is None:
            self._counts = {}
        counts = self._counts.get(n)
        if counts is None:
            tokens = self.tokens
            if n == 1:
                counts = Counter(tokens)
            elif len(tokens) < n:
                counts = Counter()
            else:
                counts = Counter(zip(*[tokens[i:] for i in range(n)]))
            self._counts[n] = counts
        return counts

    @property
    def has_masks(self) -> bool:
        """Whether :meth:`masks` is built already (a reference shared by several predictions keeps its masks)."""
        return self._masks is not None

    def masks(self) -> dict[str, int]:
        """Token -> bit mask of its positions."""
        if self._masks is None:
            self._masks = match_masks(self.tokens)
        return self._masks


def position_masks(short: TokenText, long: TokenText) -> list[int]:
    """For each position of ``short``, the mask of positions of the same token in ``long``."""
    return list(map(long.masks().get, short.tokens, repeat(0)))


def next_order(d: list[int]) -> list[int]:
    """Masks of (n+1)-gram occurrences from those of n-grams."""
    if len(d) < 2:
        return []
    return list(map(_and, d, map(_rshift, d[1:], repeat(1))))


def clipped(d: list[int], likely_repeats: bool = False) -> tuple[int, bool]:
    """(sum over the n-grams of min(count on the masks' side, count in the masked sequence), any repeat?).

    The flag says whether some matched n-gram occurs more than once on the
    masks' side; ``likely_repeats`` (unigrams) goes straight to counting the
    masks, otherwise a set of the non-zero masks first checks for repeats.
    """
    if likely_repeats:
        counts: dict[int, int] = {}
        _count_elements(counts, d)
        found = len(d) - counts.pop(0, 0)
        if len(counts) == found:
            return found, False
    else:
        matched = list(filter(None, d))
        found = len(matched)
        if not found or len(set(matched)) == found:
            return found, False  # every matched n-gram occurs once on this side
        counts = {}
        _count_elements(counts, matched)
    for mask in compress(counts, map(_lt, repeat(1), counts.values())):
        here = counts[mask]
        there = mask.bit_count()
        if here > there:
            found -= here - there
    return found, True


def overlaps(a: TokenText, b: TokenText, orders: int) -> list[int]:
    """Clipped n-gram overlap of ``a`` and ``b`` for n = 1..orders (symmetric in a and b)."""
    short, long = (a, b) if len(a.tokens) <= len(b.tokens) else (b, a)
    if not short.tokens:
        return [0] * orders
    # Masks over the shorter text's positions: narrower, so more often one machine word each;
    # but masks a text already has (a reference shared by several predictions) are reused.
    if long.has_masks and not short.has_masks and (len(long.tokens) < 64 or len(short.tokens) >= 64):
        short, long = long, short
    return overlaps_from(position_masks(long, short), orders, len(short.tokens))


def overlaps_from(d: list[int], orders: int, width: int) -> list[int]:
    """:func:`overlaps` from the unigram position masks ``d`` of one sequence in another of ``width`` tokens.

    The masks of (n+1)-grams are ``d[i] & (d[i+1] >> 1)``. While some matched
    n-gram repeats on the masks' side, clipping counts equal masks in a list.
    Once none repeats, no longer n-gram can repeat either (its prefix would),
    so the clipped count is just the number of non-zero masks. Masks are packed
    into one integer, one slot of W bits per position with a zero guard bit on
    top, where the next order is ``x & (x >> (W + 1))`` and the non-zero slots
    are counted by adding 2**(W-1) - 1 to every slot and counting the guard
    bits that light up. Masks of fewer than 64 bits are packed from the start
    (an array of machine words packs and unpacks them in one step); wider ones
    only once no n-gram repeats.
    """
    out = [0] * orders
    if not orders:
        return out
    found, repeats = clipped(d, True)
    if not found:
        return out
    out[0] = found
    if width < 64:
        return _narrow(d, out, repeats)
    n = 1
    while repeats and n < orders:
        d = next_order(d)
        found, repeats = clipped(d)
        if not found:
            return out  # no n-gram in common means no longer one either
        out[n] = found
        n += 1
    if n == orders:
        return out
    x, shift, add, guards = _packed(d, width)
    while n < orders:
        x &= x >> shift
        found = ((x + add) & guards).bit_count()
        if not found:
            break
        out[n] = found
        n += 1
    return out


def _narrow(d: list[int], out: list[int], repeats: bool) -> list[int]:
    """Orders 2.. of :func:`overlaps_from` for masks of fewer than 64 bits (``out[0]`` is filled)."""
    x, shift, add, guards = _packed(d, 63)
    size = 8 * len(d)
    for n in range(1, len(out)):
        x &= x >> shift
        if repeats:
            found, repeats = clipped(array("Q", x.to_bytes(size, "little")).tolist())
        else:
            found = ((x + add) & guards).bit_count()
        if not found:
            break
        out[n] = found
    return out


def _packed(d: list[int], width: int) -> tuple[int, int, int, int]:
    """``d`` packed into one integer, plus the shift to the next order and the slot-counting constants."""
    if width < 64:
        size = 8
        x = int.from_bytes(array("Q", d).tobytes(), "little")
    else:
        size = (width + 8) // 8
        x = int.from_bytes(b"".join(map(int.to_bytes, d, repeat(size), repeat("little"))), "little")
    add, guards = _slot_constants(size, len(d))
    return x, 8 * size + 1, add, guards


@lru_cache(maxsize=512)
def _slot_constants(size: int, slots: int) -> tuple[int, int]:
    """Per slot of ``size`` bytes: 2**(W-1) - 1 (to add) and 2**(W-1) (the guard bit)."""
    add = int.from_bytes((b"\xff" * (size - 1) + b"\x7f") * slots, "little")
    guards = int.from_bytes((b"\x00" * (size - 1) + b"\x80") * slots, "little")
    return add, guards


def clipped_multi(hyp: TokenText, refs: Sequence[TokenText], n: int) -> int:
    """BLEU's clipped count against several references: each n-gram counts at most its largest reference count."""
    counts = hyp.counts(n)
    ref_counts = [r.counts(n) for r in refs]
    total = 0
    for gram, count in counts.items():
        most = 0
        for rc in ref_counts:
            c = rc.get(gram, 0)
            if c > most:
                most = c
        total += count if count < most else most
    return total


def pair_overlaps(cache: TextCache, hyp: TokenText, ref: TokenText, orders: int) -> list[int]:
    """:func:`overlaps` of two texts, computed once per row whatever the metrics asking (BLEU, GLEU)."""
    found: list[int] = cache.memo(_OVERLAPS, (hyp, ref), _nothing_yet)  # type: ignore[arg-type, assignment]
    if len(found) < orders:
        found[:] = overlaps(hyp, ref, orders)  # the first k orders do not depend on how many follow
    return found[:orders]


def _nothing_yet(_key: object) -> list[int]:
    return []


_OVERLAPS = "overlaps"
_BUILDERS = {name: (lambda text, _tok=tok: TokenText(_tok(text))) for name, tok in WORD_TOKENIZERS.items()}
_KINDS = {name: f"words:{name}" for name in WORD_TOKENIZERS}


def word_text(cache: TextCache, tokenizer: str, text: str) -> TokenText:
    """The :class:`TokenText` of ``text``'s word tokens under ``tokenizer``, memoized in ``cache``."""
    return cache.memo(_KINDS[tokenizer], text, _BUILDERS[tokenizer])  # type: ignore[return-value]
