"""Chat replies with token log-probabilities for the loopback judge (what a G-Eval rating reads).

:func:`rated` builds a :class:`judge_scripting.Reply` whose ``logprobs`` list covers the reply text token by
token (words, spaces, punctuation and digits as pieces, the way a BPE tokenizer roughly splits JSON), with
the given alternatives at the token where the rating begins.

    server.responder = lambda body: rated({"reason": "ok", "score": 4}, {"4": -0.2, "3": -1.9, " 5": -3.0})
"""

from __future__ import annotations

import json
import re
from typing import Any, Mapping, Sequence

from judge_scripting import Reply

#: Pieces of a reply: a run of digits, a word, a run of spaces, or one other character.
_PIECES = re.compile(r"\d+|[A-Za-z]+|\s+|.", re.DOTALL)


def tokens_of(text: str, *, split_digits: bool = False) -> list[str]:
    """``text`` cut into tokens; with ``split_digits`` every digit is its own token (as Llama's tokenizer)."""
    pieces = _PIECES.findall(text)
    if split_digits:
        pieces = [d for p in pieces for d in (list(p) if p.isdigit() else [p])]
    return pieces


def content(tokens: Sequence[str], at: int | None, top: Mapping[str, Any] | Sequence[tuple[str, Any]],
            chosen_logprob: Any = -0.05) -> list[dict[str, Any]]:
    """``logprobs.content`` for ``tokens``: ``top`` (token -> log-probability, in order) at index ``at``."""
    pairs = list(top.items()) if isinstance(top, Mapping) else list(top)
    out = []
    for i, token in enumerate(tokens):
        alternatives = [{"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in pairs] if i == at else []
        out.append({"token": token, "logprob": chosen_logprob if i == at else -0.01,
                    "bytes": list(token.encode()), "top_logprobs": alternatives})
    return out


def rating_index(tokens: Sequence[str], field: str = "score") -> int:
    """The index of the first token of ``field``'s number."""
    text = "".join(tokens)
    start = re.search(r'"' + re.escape(field) + r'"\s*:\s*', text).end()
    offset = 0
    for i, token in enumerate(tokens):
        if offset <= start < offset + len(token):
            return i
        offset += len(token)
    raise ValueError(f"no {field} in {text!r}")


def rated(value: Mapping[str, Any], top: Mapping[str, Any] | Sequence[tuple[str, Any]], *, field: str = "score",
          split_digits: bool = False, chosen_logprob: Any = -0.05) -> Reply:
    """A reply of ``value`` (as JSON) with ``top`` as the alternatives at the rating's first token."""
    text = json.dumps(value)
    tokens = tokens_of(text, split_digits=split_digits)
    return Reply(text, logprobs=content(tokens, rating_index(tokens, field), top, chosen_logprob))
