"""The Runs page's form for a run's name, tags and note: the same store method the CLI's `rename`, `tag` and
`note` call (``store.run_names.label_run``), so a name or tag the CLI refuses is refused here, in the same words."""

from __future__ import annotations

from typing import Any, Mapping

import streamlit as st

from textgen_core.errors import TextgenError

from . import data
from .safe_text import plain

#: Widget keys, one set per run (a run's form starts from what that run has stored).
NAME, TAGS, NEW_TAGS, NOTE, SAVED = "runs.label_name", "runs.label_tags", "runs.label_new_tags", "runs.label_note", \
    "runs.label_saved"


REVISION = "runs.label_revision"


def key(base: str, run_id: int, revision: int = 0) -> str:
    """A widget's key for one run and one revision of the form (the number of saves so far in this session): after
    a save the form starts afresh from what is stored (a keyed widget would keep what was typed)."""
    return f"{base}.{int(run_id)}.{int(revision)}"


def labels_of(run_id: int) -> dict[str, Any]:
    """name ('' when none), tags and note ('' when none) of one run, as the runs table holds them."""
    runs = data.runs()
    row: Mapping[str, Any] = runs[runs["run_id"] == run_id].iloc[0].to_dict()
    name, note = row.get("name"), row.get("note")
    return {"name": name if isinstance(name, str) else "", "tags": list(row.get("tags") or []),
            "note": note if isinstance(note, str) else ""}


def label_form(run_id: int) -> None:
    """Rename, retag and annotate ``run_id``; the message of the last save is shown once."""
    saved = st.session_state.pop(SAVED, None)
    if saved:
        st.success(plain(saved))
    now = labels_of(run_id)
    revision = st.session_state.get(REVISION, 0)
    with st.form(key(NAME, run_id, revision) + ".form", border=True):
        st.markdown("**Name, tags and note**")
        name = st.text_input("Name", value=now["name"], key=key(NAME, run_id, revision),
                             help="Unique in this database; not a bare number and no ':' (RUN:MODEL splits on it). "
                                  "Empty: the run has no name. The run's id keeps working everywhere.")
        kept = st.multiselect("Tags (untick to remove)", now["tags"], default=now["tags"],
                              key=key(TAGS, run_id, revision))
        added = st.text_input("Add tags (separated by spaces or commas)", key=key(NEW_TAGS, run_id, revision),
                              help="One word each: letters, digits and - _ . : /")
        note = st.text_area("Note", value=now["note"], key=key(NOTE, run_id, revision), height=80)
        if not st.form_submit_button("Save name, tags and note"):
            return
    change = _change(now, name, kept, added, note)
    if not change:
        st.info("Nothing changed.")
        return
    try:
        data.store().run_names.label_run(run_id, **change)
    except TextgenError as exc:
        st.error(plain(str(exc)))
        return
    data.refresh()
    st.session_state[REVISION] = revision + 1
    st.session_state[SAVED] = f"Run {run_id}: {_said(change)}."
    st.rerun()


def _change(now: Mapping[str, Any], name: str, kept: list[str], added: str, note: str) -> dict[str, Any]:
    """The keyword arguments of ``label_run`` that turn ``now`` into what the form holds (only what differs)."""
    change: dict[str, Any] = {}
    name = " ".join(name.split())
    if name != now["name"]:
        change.update({"clear_name": True} if not name else {"name": name})
    new_tags = [t for t in added.replace(",", " ").split() if t not in now["tags"]]
    dropped = [t for t in now["tags"] if t not in kept]
    if new_tags:
        change["add_tags"] = list(dict.fromkeys(new_tags))
    if dropped:
        change["remove_tags"] = dropped
    if note.strip() != now["note"].strip():
        change["note"] = note
    return change


def _said(change: Mapping[str, Any]) -> str:
    parts = []
    if change.get("clear_name"):
        parts.append("name removed")
    elif "name" in change:
        parts.append(f"named {change['name']!r}")
    if change.get("add_tags"):
        parts.append("tagged " + ", ".join(change["add_tags"]))
    if change.get("remove_tags"):
        parts.append("untagged " + ", ".join(change["remove_tags"]))
    if "note" in change:
        parts.append("note saved" if change["note"].strip() else "note cleared")
    return "; ".join(parts)
