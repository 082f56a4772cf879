"""The one way a report builds HTML: every text is escaped unless it is markup this module made.

:func:`tag` takes element names and attribute names from the code (never from the
data) and escapes every child and every attribute value; :class:`Markup` marks
what is already escaped. No text from a run reaches the page any other way, so a
prediction holding ``<script>``, ``<img onerror=...>`` or a ``javascript:`` link is
shown as the characters it holds. No element the report draws takes a URL.
"""

from __future__ import annotations

import html
import math
import re
from typing import Any, Iterable

#: Attribute names a report may write (checked, so a typo cannot become an event handler).
_ATTRIBUTE = re.compile(r"^(?:class|id|hidden|open|colspan|title|type|placeholder|for|value|selected|lang|charset|"
                        r"name|content|http-equiv|role|step|min|max|aria-[a-z]+|data-[a-z0-9-]+|viewBox|width|height|x|y|x1|x2|"
                        r"y1|y2|cx|cy|r|fill|stroke|stroke-width|stroke-dasharray|text-anchor|font-size|"
                        r"dominant-baseline|xmlns|preserveAspectRatio)$")
_NAME = re.compile(r"^[a-z][a-z0-9]*$")
#: Elements a report never builds from parts: nothing that runs, loads, links or submits.
_REFUSED = frozenset({"script", "style", "a", "img", "iframe", "object", "embed", "link", "base", "form", "image",
                      "use", "foreignobject", "video", "audio", "source", "meta"})


class Markup(str):
    """Text that is already HTML (made by :func:`tag` or :func:`esc`); never built from data by hand."""


def esc(value: Any) -> Markup:
    """``value`` as HTML text: markup passes, anything else is escaped (quotes included)."""
    if isinstance(value, Markup):
        return value
    return Markup(html.escape("" if value is None else str(value), quote=True))


def _children(children: Iterable[Any]) -> str:
    out = []
    for child in children:
        if child is None:
            continue
        if isinstance(child, (list, tuple)):
            out.append(_children(child))
        else:
            out.append(esc(child))
    return "".join(out)


def _attributes(attrs: dict[str, Any]) -> str:
    parts = []
    for key, value in attrs.items():
        name = "class" if key == "cls" else key.rstrip("_").replace("_", "-")
        if not _ATTRIBUTE.match(name):
            raise ValueError(f"attribute {name!r} is not one a report writes")
        if value is None or value is False:
            continue
        parts.append(f" {name}" if value is True else f' {name}="{esc(value)}"')
    return "".join(parts)


def tag(element: str, *children: Any, **attrs: Any) -> Markup:
    """``<element attrs>children</element>`` with every child and attribute value escaped (``cls`` is class,
    ``data_x`` is data-x)."""
    if not _NAME.match(element) or element in _REFUSED:
        raise ValueError(f"element {element!r} is not one a report writes")
    return Markup(f"<{element}{_attributes(attrs)}>{_children(children)}</{element}>")


def void(element: str, **attrs: Any) -> Markup:
    """An element without children (``<meta>``, ``<input>``, ``<br>``)."""
    if not _NAME.match(element) or (element in _REFUSED and element != "meta"):
        raise ValueError(f"element {element!r} is not one a report writes")
    return Markup(f"<{element}{_attributes(attrs)}>")


def join(parts: Iterable[Any]) -> Markup:
    """Several children as one piece of markup (each escaped unless markup)."""
    return Markup(_children(parts))


def num(value: Any, digits: int = 4, signed: bool = False) -> str:
    """A number as the CLI prints it ('0.1234', '+0.0100'); '-' when there is none."""
    if value is None or isinstance(value, str):
        return "-" if value is None else value
    value = float(value)
    if math.isnan(value):
        return "-"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def pval(value: Any) -> str:
    """A p-value as the CLI prints it."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.4f}" if value >= 1e-4 else f"{value:.1e}"


def exact(value: Any) -> str | None:
    """The shortest text that reads back as the same float (for data-value attributes); None when missing."""
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else repr(value)
