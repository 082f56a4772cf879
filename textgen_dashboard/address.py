"""Every view is an address: a page's state mirrored in the query string.

Streamlit keeps widget values per browser session, so without this a reload or a
pasted link shows whatever the session viewed last. A page declares its
:class:`Field` s once (query parameter, session-state key, kind) and wraps its body
in :func:`kept`: on entry the address wins wherever it changed since the page last
read or wrote it (a pasted link, a reload, a link from another page); on a normal
exit the page's current state is written back, so the address bar always names the
view on screen (``?run=3&score=bleu&models=a&models=b``).
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import streamlit as st

#: Session key of {session key: parameter values} last applied from or written to the address, per page key
#: (a parameter such as ``run`` is shared by pages, each remembering what it last saw).
_SEEN = "address.seen"
#: (page, address) this session's pages wrote last.
_LAST = "address.last"


@dataclass(frozen=True)
class Field:
    """One query parameter bound to one session-state key.

    ``kind``: "int", "str", "list" (repeated parameter: ``models=a&models=b``) or "bool" ("1"/"0").
    """

    param: str
    key: str
    kind: str = "str"


def _decode(field: Field, values: list[str]) -> Any:
    if field.kind == "list":
        return list(values)
    raw = values[-1]
    if field.kind == "int":
        return int(raw) if raw.strip().lstrip("-").isdigit() else raw  # pick_run reports an unknown run
    if field.kind == "bool":
        return raw.strip().lower() in ("1", "true", "yes")
    return raw


def _encode(field: Field, value: Any) -> list[str]:
    if value is None:
        return []
    if field.kind == "list":
        return [str(v) for v in value]
    if field.kind == "bool":
        return ["1"] if value else []
    return [str(value)]


def _address() -> dict[str, list[str]]:
    return {name: st.query_params.get_all(name) for name in st.query_params}


def _page(fields: Sequence[Field]) -> tuple[str, ...]:
    return tuple(field.key for field in fields)


def adopt(fields: Sequence[Field]) -> None:
    """Copy into session state every parameter whose value in the address changed since last seen.

    An address another page wrote and left behind (a page switch that keeps the query string) is not a link
    to this page: its ``run`` or ``score`` belong to that page's view, so nothing of it is adopted."""
    seen: dict[str, tuple[str, ...]] = st.session_state.setdefault(_SEEN, {})
    last = st.session_state.get(_LAST)
    leftover = last is not None and last[0] != _page(fields) and last[1] == _address()
    for field in fields:
        values = tuple(st.query_params.get_all(field.param))
        if leftover:
            seen[field.key] = values
        if values == seen.get(field.key):
            continue
        seen[field.key] = values
        if values:
            st.session_state[field.key] = _decode(field, list(values))


def publish(fields: Sequence[Field]) -> None:
    """Write the page's current state to the address (only this page's parameters; empty ones left out)."""
    seen: dict[str, tuple[str, ...]] = st.session_state.setdefault(_SEEN, {})
    wanted: dict[str, list[str]] = {}
    for field in fields:
        values = _encode(field, st.session_state.get(field.key))
        seen[field.key] = tuple(values)
        if values:
            wanted[field.param] = values
    if _address() != wanted:
        st.query_params.from_dict(wanted)
    st.session_state[_LAST] = (_page(fields), wanted)


@contextmanager
def kept(fields: Sequence[Field]) -> Iterator[None]:
    """Adopt the address before the page's widgets run; publish their state when the page ends normally."""
    adopt(fields)
    yield
    publish(fields)


def asked_run() -> str | None:
    """The run the address asks for (``?run=``), as typed."""
    return st.query_params.get("run")
