"""Tokenizers shared by the lexical metrics, and the per-chunk cache that runs each once.

Every text is tokenized at most once per tokenizer within a call of
:func:`textgen_core.metrics.lexical.score_lexical`; the tokens (and anything
built from them, such as n-gram counts) are shared by all selected metrics.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Hashable

#: ROUGE tokens: what rouge-score keeps after lowercasing and replacing every
#: character outside [a-z0-9] by a space, i.e. the runs of [a-z0-9] of the
#: lowercased text; for ASCII text one byte translation table does both steps.
_ROUGE_TOKEN = re.compile(r"[a-z0-9]+")
_ROUGE_ASCII = bytes(
    c + 32 if 65 <= c <= 90 else c if (48 <= c <= 57 or 97 <= c <= 122) else 32 for c in range(256)
)

#: Word tokens of the reference system (valor-lite's BLEU tokenizer):
#: words, dollar amounts, and runs of other non-space characters except dots.
_REGEX_TOKEN = re.compile(r"\w+|\$[\d]+|[^\s\.]+")
#: Bytes of plain ASCII text for the regex tokenizer's shortcut (letters, digits, space, newline,
#: period, comma) map to 1, all others to 0.
_PLAIN_ASCII = bytes(int(chr(c).isalnum() or chr(c) in " \n.,") for c in range(128)) + bytes(128)
#: A comma that the regex would glue to what follows (anything but a space, a newline, a period, the end).
_GLUED_COMMA = re.compile(rb",(?:[^ \n.]|\Z)")

# mteval-v13a style: ASCII punctuation is split off, except the apostrophe,
# the hyphen, the period and the comma; those last two are split off unless
# they sit next to a digit, and a hyphen is split off after a digit.
_PUNCT_13A = re.compile("([" + re.escape("!\"#$%&()*+/:;<=>?@[\\]^_`{|}~") + "])")
_DOT_AFTER_NONDIGIT = re.compile(r"([^0-9])([.,])")
_DOT_BEFORE_NONDIGIT = re.compile(r"([.,])([^0-9])")
_DASH_AFTER_DIGIT = re.compile(r"([0-9])(-)")
_ENTITIES = (("&quot;", '"'), ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">"))

_STEM_CACHE_LIMIT = 500_000
_stem_cache: dict[str, str | None] = {}
_stemmer = None


def rouge_tokens(text: str, stem: bool = False) -> list[str]:
    """Tokens exactly as rouge-score's default tokenizer gives them."""
    try:
        # ASCII text: one C-level pass maps A-Z to a-z and everything else outside [a-z0-9] to a space.
        tokens = text.encode("ascii").translate(_ROUGE_ASCII).decode("ascii").split()
    except UnicodeEncodeError:
        # lower() can turn some non-ASCII letters into ASCII ones (the Kelvin sign into k).
        tokens = _ROUGE_TOKEN.findall(text.lower())
    if not stem:
        return tokens
    cache = _stem_cache
    out = []
    for token in tokens:
        if len(token) <= 3:
            out.append(token)
            continue
        stemmed = cache.get(token, "")
        if stemmed == "":
            stemmed = _porter_stem(token)
        if stemmed is not None:
            out.append(stemmed)
    return out


def _porter_stem(token: str) -> str | None:
    """nltk's Porter stem (what rouge-score uses), memoized; None when rouge-score would drop it."""
    global _stemmer
    if _stemmer is None:
        from nltk.stem import porter

        _stemmer = porter.PorterStemmer()
    stemmed = _stemmer.stem(token)
    value = stemmed if _ROUGE_TOKEN.fullmatch(stemmed) else None
    if len(_stem_cache) >= _STEM_CACHE_LIMIT:
        _stem_cache.clear()
    _stem_cache[token] = value
    return value


def regex_tokens(text: str) -> list[str]:
    """Case-sensitive word tokens: ``\\w+|\\$[\\d]+|[^\\s\\.]+`` (valor-lite's BLEU tokenizer)."""
    # No token can hold a period, so periods split like spaces. A comma followed by a space, a
    # period or a newline ends a token and is a token of its own. So when a text is ASCII letters
    # and digits, spaces, newlines, periods and such commas only, splitting on whitespace after
    # padding commas gives exactly the regex's tokens; any other text takes the regex.
    try:
        raw = text.encode("ascii")
    except UnicodeEncodeError:
        return _unicode_regex_tokens(text)
    if b"\0" in raw.translate(_PLAIN_ASCII):
        return _REGEX_TOKEN.findall(text)
    if b"," not in raw:
        return text.replace(".", " ").split()
    if _GLUED_COMMA.search(raw) is None:
        return text.replace(".", " ").replace(",", " , ").split()
    return _REGEX_TOKEN.findall(text)


def _unicode_regex_tokens(text: str) -> list[str]:
    """:func:`regex_tokens` of a non-ASCII text: the same shortcut with Unicode word characters."""
    # str.isalnum() holds for exactly the characters \w matches, except the underscore.
    spaced = text.replace(".", " ")
    if "," in spaced:
        if ",," in spaced:
            return _REGEX_TOKEN.findall(text)
        spaced = spaced.replace(", ", " , ")
        if spaced.count(",") != spaced.count(" , "):
            return _REGEX_TOKEN.findall(text)
    rest = spaced.replace(",", "").replace(" ", "").replace("\n", "")
    if rest.isalnum() or not rest:
        return spaced.split()
    return _REGEX_TOKEN.findall(text)


def regex_lower_tokens(text: str) -> list[str]:
    """The regex tokens of the lowercased text."""
    return regex_tokens(text.lower())


def tokens_13a(text: str) -> list[str]:
    """A case-sensitive tokenizer following the rules of mteval-v13a (WMT's reference script)."""
    text = text.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in text:
        for entity, char in _ENTITIES:
            text = text.replace(entity, char)
    text = _PUNCT_13A.sub(r" \1 ", f" {text} ")
    text = _DOT_AFTER_NONDIGIT.sub(r"\1 \2 ", text)
    text = _DOT_BEFORE_NONDIGIT.sub(r" \1 \2", text)
    text = _DASH_AFTER_DIGIT.sub(r"\1 \2 ", text)
    return text.split()


def whitespace_tokens(text: str) -> list[str]:
    """``str.split()``: runs of non-whitespace characters."""
    return text.split()


#: Word tokenizers offered by BLEU, GLEU and METEOR, by parameter value.
WORD_TOKENIZERS: dict[str, Callable[[str], list[str]]] = {
    "regex": regex_tokens,
    "regex-lower": regex_lower_tokens,
    "13a": tokens_13a,
    "whitespace": whitespace_tokens,
}

#: Signature labels of the word tokenizers.
TOKENIZER_LABELS = {
    "regex": "regex-words",
    "regex-lower": "regex-words-lc",
    "13a": "13a",
    "whitespace": "whitespace",
}


class TextCache:
    """Memo of per-text work (tokens, n-gram counts...) for one scoring call.

    Texts seen more than once in the call (``repeated``: typically the
    references every model is compared with) keep their work for the whole
    call; the others keep it only until :meth:`next_row`, so a large chunk
    does not pile up objects for the garbage collector to walk.
    """

    __slots__ = ("_keep", "_tables", "_row")

    def __init__(self, repeated: set[str] | frozenset[str] = frozenset()) -> None:
        self._keep = repeated
        self._tables: dict[object, dict[Hashable, object]] = {}
        self._row: dict[object, dict[Hashable, object]] = {}

    def memo(self, kind: object, text: Hashable, build: Callable[[Any], object]) -> object:
        """``build(text)``, computed once per ``kind`` and text (or other key, such as a pair of texts)."""
        tables = self._tables if text in self._keep else self._row
        table = tables.get(kind)
        if table is None:
            table = tables[kind] = {}
        value = table.get(text)
        if value is None:
            value = table[text] = build(text)
        return value

    def next_row(self) -> None:
        """Forget the work on texts that occur only once."""
        if self._row:
            self._row = {}
