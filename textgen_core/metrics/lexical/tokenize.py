"""Tokenizers shared by the lexical metrics, and the per-chunk cache that runs each once.

Every text is tokenized at most once per tokenizer within a call of
:func:`textgen_core.metrics.lexical.score_lexical`; the tokens (and anything
built from them, such as n-gram counts) are shared by all selected metrics.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Hashable

import regex

#: ROUGE tokens: what rouge-score keeps after lowercasing and replacing every
#: character outside [a-z0-9] by a space, i.e. the runs of [a-z0-9] of the
#: lowercased text; for ASCII text one byte translation table does both steps.
_ROUGE_TOKEN = re.compile(r"[a-z0-9]+")
_ROUGE_ASCII = bytes(
    c + 32 if 65 <= c <= 90 else c if (48 <= c <= 57 or 97 <= c <= 122) else 32 for c in range(256)
)

#: Word tokens of the reference system: nltk's RegexpTokenizer(REGEX_PATTERN), i.e. words, dollar
#: amounts, and runs of other non-space characters except dots. nltk (3.10 on) compiles the pattern
#: with the ``regex`` engine and these flags, whose \w, \d and \s follow Unicode properties: \w takes
#: combining marks (Devanagari vowel signs, Arabic harakat, NFD accents) and the zero-width joiner,
#: but not superscript digits; \s leaves out U+001C..U+001F. So must we.
REGEX_PATTERN = r"\w+|\$[\d]+|[^\s\.]+"
REGEX_FLAGS = regex.UNICODE | regex.MULTILINE | regex.DOTALL
_REGEX_TOKEN = regex.compile(REGEX_PATTERN, REGEX_FLAGS)
#: The same pattern in ``re``: on ASCII text its \w, \d and \s agree with the ``regex`` engine's on
#: every character except U+001C..U+001F (whitespace to ``re`` only), and it is faster.
_ASCII_REGEX_TOKEN = re.compile(REGEX_PATTERN)
#: Bytes of ASCII text, mapped to 1 for what the split shortcut handles (letters, digits, space,
#: newline, period, comma), 2 for U+001C..U+001F (where ``re`` and ``regex`` disagree), 0 otherwise.
_ASCII_KIND = bytes(
    1 if chr(c).isalnum() or chr(c) in " \n.," else 2 if 0x1C <= c <= 0x1F else 0 for c in range(128)
) + bytes(128)
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
    """Case-sensitive word tokens, equal to nltk's ``RegexpTokenizer(REGEX_PATTERN).tokenize(text)``."""
    # No token can hold a period, so periods split like spaces. A comma followed by a space, a
    # period or a newline ends a token and is a token of its own. So when a text is ASCII letters
    # and digits, spaces, newlines, periods and such commas only, splitting on whitespace after
    # padding commas gives exactly the regex's tokens. Other ASCII text takes ``re``, unless it has
    # one of the four characters where ``re`` differs; everything else takes the ``regex`` engine.
    try:
        raw = text.encode("ascii")
    except UnicodeEncodeError:
        return _REGEX_TOKEN.findall(text)
    kinds = raw.translate(_ASCII_KIND)
    if b"\2" in kinds:
        return _REGEX_TOKEN.findall(text)
    if b"\0" in kinds:
        return _ASCII_REGEX_TOKEN.findall(text)
    if b"," not in raw:
        return text.replace(".", " ").split()
    if _GLUED_COMMA.search(raw) is None:
        return text.replace(".", " ").replace(",", " , ").split()
    return _ASCII_REGEX_TOKEN.findall(text)


def regex_lower_tokens(text: str) -> list[str]:
    """The regex tokens of ``text.lower()`` (so 'İstanbul' gives one token, 'i̇stanbul', with its combining dot)."""
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

    Texts seen more than once in the call (``repeated``, or what ``find``
    returns when first needed: typically the references every model is
    compared with) keep their work for the whole call; the others keep it only
    until :meth:`next_row`, so a large chunk does not pile up objects for the
    garbage collector to walk. Calls whose metrics all run compiled code never
    ask, and never pay for ``find``.
    """

    __slots__ = ("_keep", "_find", "_tables", "_row")

    def __init__(self, repeated: set[str] | frozenset[str] = frozenset(),
                 find: Callable[[], set[str]] | None = None) -> None:
        self._keep = repeated
        self._find = find
        self._tables: dict[object, dict[Hashable, object]] = {}
        self._row: dict[object, dict[Hashable, object]] = {}

    def memo(self, kind: object, text: Hashable, build: Callable[[Any], object]) -> object:
        """``build(text)``, computed once per ``kind`` and text (or other key, such as a pair of texts)."""
        if self._find is not None:
            self._keep, self._find = self._find(), None
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
