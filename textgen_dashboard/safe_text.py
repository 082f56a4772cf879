"""The one escaping helper of the dashboard.

Dataset text (column names, model names, ids, metadata, answers) and judge text
(verdicts, reasons) come from files and endpoints nobody here controls. Shown in a
markdown element (markdown, caption, alerts, labels, tabs, expanders), a column
named ``![x](http://attacker/p.png)`` would make the browser fetch that URL and a
model name could become a live link. :func:`plain` escapes every character that
markdown, Streamlit's directives (``:red[...]``, ``:material/...:``, ``$math$``) or
HTML give a meaning, and breaks bare URLs and e-mail addresses with a zero-width
space (GFM would link them), so such text always shows as the characters it holds.
"""

from __future__ import annotations

import re

# Every ASCII punctuation mark with a meaning in CommonMark/GFM, Streamlit markdown or HTML.
_MARKDOWN_SPECIALS = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=&\"'^%])")
# GFM turns bare URLs and e-mail addresses into links after escapes are resolved, so escaping
# cannot stop it; a zero-width space inside "http://", "www." or "user@host.tld" does.
_AUTOLINK = re.compile(r"(?i)(https?|ftp|mailto|www)(?=[:.])|(@)(?=[-\w]+\.[-\w])")
_ZERO_WIDTH_SPACE = "\u200b"


def plain(text: object) -> str:
    """``text`` (any value, as ``str``) safe inside markdown: shown literally, never as markup or a link."""
    unlinked = _AUTOLINK.sub(lambda m: (m.group(1) or m.group(2)) + _ZERO_WIDTH_SPACE, str(text))
    return _MARKDOWN_SPECIALS.sub(r"\\\1", unlinked)
