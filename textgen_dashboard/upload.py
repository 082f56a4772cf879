"""Upload page: file, preview, column mapping (guessed, every field overridable), save, manage.

The uploaded file lives in session state as (file name, bytes) under
``state.UPLOAD_FILE``: the file uploader fills it, the bundled-sample button
fills it, and tests fill it directly. Everything after that reads only that key.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Callable

import pandas as pd
import streamlit as st

from textgen_core.catalog import store_version, stored_version
from textgen_core.datasets import EXTENSIONS, ColumnMapping, guess_mapping, load_dataset, sample_dataset_path
from textgen_core.datasets.mapping import LIST_FORMATS
from textgen_core.errors import InputError, TextgenError
from textgen_core.formatting import plain_table
from textgen_core.store import Store

from . import data, state, upload_stream
from .safe_text import plain
from .upload_versions import saved_message, versions_section
from .widgets import link, show_table

NOT_MAPPED = "(not mapped)"
_SINGLE_FIELDS = ("id", "model", "query", "prediction")
_LIST_FIELDS = ("references", "contexts")
_FROM_UPLOADER = "upload.from_uploader"
_SEEDED_FOR = "upload.seeded_for"
_SAVED_WARNINGS = "upload.saved_warnings"
_UPLOAD_ID = "upload.file_id"
#: Caption under the mapping when it was restored from an earlier save of the same bytes.
_REMEMBERED = "upload.remembered"


def render() -> None:
    """The whole Upload page."""
    st.title("Upload a dataset")
    _file_input()
    upload = st.session_state.get(state.UPLOAD_FILE)
    if upload:
        file_name, payload = upload
        _mapping_section(file_name, payload)
    saved = st.session_state.get(state.UPLOAD_SAVED)
    if saved:
        st.success(saved)
        for warning in st.session_state.get(_SAVED_WARNINGS, ()):
            st.warning(plain(warning))
        link("evaluate", "Evaluate it", icon=":material/play_arrow:")
    st.divider()
    render_manage()


def _file_input() -> None:
    accepted = sorted({suffix.lstrip(".") for suffix in EXTENSIONS})
    uploaded = st.file_uploader("CSV, JSON Lines or Parquet file", type=accepted, key=state.UPLOAD_UPLOADER,
                                help="One row per (datum, model) in long format, or one row per datum with a "
                                     "prediction column per model in wide format.")
    if uploaded is not None:
        if st.session_state.get(_UPLOAD_ID) != uploaded.file_id:  # a new upload, even of the same file
            _new_file()
            st.session_state[_UPLOAD_ID] = uploaded.file_id
        st.session_state[state.UPLOAD_FILE] = (uploaded.name, uploaded.getvalue())
        st.session_state[_FROM_UPLOADER] = True
    elif st.session_state.get(_FROM_UPLOADER):  # the user removed the file from the uploader
        st.session_state.pop(state.UPLOAD_FILE, None)
        st.session_state[_FROM_UPLOADER] = False
    if st.button("Use the bundled sample file", help="A small QA dataset with two models, references and contexts"):
        path = sample_dataset_path()
        _new_file()
        st.session_state[state.UPLOAD_FILE] = (path.name, path.read_bytes())


def _new_file() -> None:
    """A file was just given: its mapping is seeded afresh and no message of an earlier save survives."""
    st.session_state.pop(_SEEDED_FOR, None)
    st.session_state.pop(state.UPLOAD_SAVED, None)
    st.session_state.pop(_SAVED_WARNINGS, None)


def max_upload_bytes() -> int:
    """server.maxUploadSize (MB) of .streamlit/config.toml, in bytes: one limit for every way in."""
    return int(st.get_option("server.maxUploadSize")) * 1024 * 1024


def _mapping_section(file_name: str, payload: bytes) -> None:
    if len(payload) > max_upload_bytes():
        st.error(f"{plain(file_name)} is {len(payload) / 2**20:,.0f} MB; the limit is "
                 f"{max_upload_bytes() // 2**20} MB (server.maxUploadSize in .streamlit/config.toml).")
        return
    large = upload_stream.is_large(file_name, payload)
    try:
        table = upload_stream.preview(file_name, payload) if large else None
        if table is None:
            large, table = False, data.upload_table(file_name, payload)
    except InputError as exc:
        st.error(plain(exc.describe()))
        return
    st.subheader("Preview")
    if large:
        st.caption(f"{plain(file_name)}: {len(payload) / 2**20:,.1f} MB, {len(table.columns)} columns (first "
                   f"{len(table)} rows shown). A large file: every row is checked while it is saved, in chunks; "
                   "a bad row stops the save and nothing is stored.")
    else:
        st.caption(f"{plain(file_name)}: {len(table):,} rows, {len(table.columns)} columns (first 50 rows shown)")
    st.dataframe(_plain_frame(table.head(50)), placeholder="–")
    columns = [str(c) for c in table.columns]
    _seed(file_name, payload, columns)
    st.subheader("Column mapping")
    mapping = _mapping_form(columns)
    if mapping is None:
        return
    if large:
        problem = upload_stream.mapping_problem(file_name, columns, mapping)
        if problem:
            st.error(plain(problem))
            return
        _save_form(file_name, payload, mapping, streamed=True)
        return
    summary = data.check_upload(file_name, payload, json.dumps(mapping.to_dict(), sort_keys=True))
    if "error" in summary:
        st.error(plain(summary["error"]))
        if summary.get("row") in table.index:
            st.dataframe(_plain_frame(table.loc[[summary["row"]]]), placeholder="–")
        return
    line = (f"{summary['rows']:,} rows: {summary['datums']:,} datums x {len(summary['models'])} models "
            f"({plain(', '.join(summary['models']))}); fields: {', '.join(summary['fields']) or 'none'}; "
            f"metadata: {plain(', '.join(summary['metadata_columns'])) or 'none'}")
    problem = pairing_problem(summary, mapping, columns)
    if problem and not summary.get("paired_datums"):
        st.warning(f"{line}.\n\n{problem}", icon=":material/link_off:")
    else:
        st.success(line)
        if problem:
            st.info(problem)
    for warning in summary.get("warnings", []):
        st.warning(plain(warning))
    _save_form(file_name, payload, mapping)


def pairing_problem(summary: dict, mapping: ColumnMapping, columns: list[str]) -> str | None:
    """What to map when the models' rows do not meet on a datum (a comparison would have no pairs), else None."""
    models, datums, paired = len(summary["models"]), summary["datums"], summary.get("paired_datums", 0)
    if models < 2 or paired == datums:
        return None
    if paired:
        return (f"Only {paired:,} of {datums:,} datums have rows of two models or more; comparisons use only "
                "those. If the same question has different ids in different rows, map another id column.")
    others = [c for c in columns if c not in mapping.columns_used()]
    how = ("The id is unmapped, so every row became its own datum. Map id to the column that names the same "
           "question in every model's row" if not mapping.id else
           f"The id column {plain(mapping.id)} differs between the models' rows of one question. Map id to the "
           "column that names the same question in every model's row")
    how += f" (unmapped columns: {plain(', '.join(others)) or 'none'})"
    if not mapping.id and mapping.query and mapping.format == "long":
        how += ", or tick 'Pair rows by identical query text'"
    return f"No datum has rows of two models: Compare would have nothing to pair. {how}."


def _plain_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy without the reader's attrs (Streamlit cannot serialize them)."""
    frame = frame.copy()
    frame.attrs = {}
    return frame


def _seed(file_name: str, payload: bytes, columns: list[str]) -> None:
    """Fill the mapping widgets with the guess, once per new file."""
    digest = hashlib.sha256(payload).hexdigest()
    identity = f"{file_name}:{digest}"
    if st.session_state.get(_SEEDED_FOR) == identity:
        return
    remembered = data.store().remembered_mapping(digest)
    guess = guess_mapping(columns)
    if remembered is not None:
        try:
            guess = ColumnMapping.from_dict(remembered)
        except InputError:  # a mapping of an older version of the tool: the guess instead
            remembered = None
    st.session_state[_REMEMBERED] = remembered is not None
    for name in _SINGLE_FIELDS:
        st.session_state[state.upload_field(name)] = getattr(guess, name) or NOT_MAPPED
    for name in _LIST_FIELDS:
        st.session_state[state.upload_field(name)] = list(getattr(guess, name))
    st.session_state[state.UPLOAD_FORMAT] = guess.format
    st.session_state[state.UPLOAD_WIDE] = list(guess.wide_predictions.values())
    st.session_state[state.UPLOAD_LIST_FORMAT] = guess.list_format
    st.session_state[state.UPLOAD_DELIMITER] = guess.delimiter
    st.session_state[state.UPLOAD_NULL_REFERENCES] = guess.null_references == "missing"
    st.session_state[state.UPLOAD_PAIR_BY_QUERY] = guess.pair_by_query
    st.session_state[state.UPLOAD_DEFAULT_MODEL] = guess.default_model
    st.session_state[state.UPLOAD_NAME] = Path(file_name).stem
    st.session_state[state.UPLOAD_REPLACE] = False
    st.session_state[_SEEDED_FOR] = identity
    st.session_state.pop(state.UPLOAD_SAVED, None)


def _mapping_form(columns: list[str]) -> ColumnMapping | None:
    """Widgets for every mapping field; the ColumnMapping they describe, or None after an error."""
    options = [NOT_MAPPED, *columns]
    if st.session_state.get(_REMEMBERED):
        st.caption("This file was saved before: its mapping is the one it was saved with.")
    fmt = st.radio("Format", ["long", "wide"], key=state.UPLOAD_FORMAT, horizontal=True,
                   help="long: one row per (datum, model); wide: one row per datum, one prediction column per model")
    left, right = st.columns(2)
    with left:
        picked = {"id": st.selectbox("id", options, key=state.upload_field("id"),
                                     help="Datum id; unmapped means the row number")}
        if fmt == "long":
            picked["model"] = st.selectbox("model", options, key=state.upload_field("model"))
            picked["prediction"] = st.selectbox("prediction", options, key=state.upload_field("prediction"))
        picked["query"] = st.selectbox("query", options, key=state.upload_field("query"))
    with right:
        refs = st.multiselect("references (one or more columns, in order)", columns,
                              key=state.upload_field("references"))
        ctxs = st.multiselect("contexts (one or more columns, in order)", columns, key=state.upload_field("contexts"))
        list_format = st.selectbox("Several items in one cell", list(LIST_FORMATS), key=state.UPLOAD_LIST_FORMAT,
                                   help="auto: a JSON list if the cell holds one, else one item; json: always a JSON "
                                        "list; delimiter: split on the delimiter; single: the cell is one item")
        delimiter = st.text_input("Delimiter", key=state.UPLOAD_DELIMITER, disabled=list_format != "delimiter")
        null_refs = st.checkbox("Treat NaN/None/null references as missing", key=state.UPLOAD_NULL_REFERENCES,
                                help="A reference cell that reads NaN, None or null is scored as that text unless "
                                     "this is ticked; the rows holding one are listed above the Save button")
    wide: dict[str, str] = {}
    default_model = st.session_state.get(state.UPLOAD_DEFAULT_MODEL) or "model"
    if fmt == "wide":
        chosen = st.multiselect("Prediction columns, one per model", columns, key=state.UPLOAD_WIDE)
        named = {column: model for model, column in guess_mapping(columns).wide_predictions.items()}
        wide = {named.get(column, column): column for column in chosen}
        if wide:
            st.caption("Models: " + plain(", ".join(f"{m} <- {c}" for m, c in wide.items())))
    elif picked.get("model") == NOT_MAPPED:
        default_model = st.text_input("Model name for every row", key=state.UPLOAD_DEFAULT_MODEL)
    single = {k: (None if v == NOT_MAPPED else v) for k, v in picked.items()}
    pair = False
    if fmt == "long" and single["id"] is None and single["query"] is not None:
        pair = st.checkbox("Pair rows by identical query text", key=state.UPLOAD_PAIR_BY_QUERY,
                           help="No id column: rows with the same query text become one datum (one row per "
                                "model); without this every row is its own datum and models cannot be compared")
    try:
        return ColumnMapping(**single, pair_by_query=pair, references=tuple(refs), contexts=tuple(ctxs), format=fmt,
                             wide_predictions=wide, list_format=list_format, delimiter=delimiter,
                             default_model=default_model or "model",
                             null_references="missing" if null_refs else "keep")
    except InputError as exc:
        st.error(plain(exc.describe()))
        return None


def _save_form(file_name: str, payload: bytes, mapping: ColumnMapping, streamed: bool = False) -> None:
    name = st.text_input("Dataset name", key=state.UPLOAD_NAME)
    replace = st.checkbox("Replace a dataset with this name (deletes its runs)", key=state.UPLOAD_REPLACE,
                          help="Unticked, a file saved under a name already stored becomes that dataset's next "
                               "version (its runs stay pinned to theirs); the same content is stored only once")
    if not st.button("Save dataset", type="primary", disabled=not name.strip()):
        return
    warnings: tuple[str, ...] = ()
    try:
        with st.spinner("Saving..."):
            if streamed:
                saved = upload_stream.save(data.store(), file_name, payload, mapping, name.strip(), replace)
                rows, warnings = saved.rows, saved.warnings
                stored = stored_version(data.store(), saved.dataset_id, saved.reused)
            else:
                dataset = load_dataset(payload, mapping, name=name.strip(), file_name=file_name)
                rows = len(dataset.rows)
                if replace:
                    stored = stored_version(data.store(), data.store().save_dataset(dataset, name.strip(),
                                                                                   replace=True), False)
                else:  # a new version of the named dataset, or the stored one with the same content
                    stored = store_version(data.store(), dataset, name.strip())
            data.store().remember_mapping(hashlib.sha256(payload).hexdigest(), file_name, mapping.to_dict())
    except TextgenError as exc:
        st.error(plain(str(exc)))
        return
    data.refresh()
    st.session_state[state.UPLOAD_SAVED] = saved_message(stored, rows)
    st.session_state[_SAVED_WARNINGS] = warnings
    st.session_state[state.EVAL_PRESELECT] = stored.name
    st.rerun()


def render_manage() -> None:
    """Saved datasets: list, rename and delete."""
    st.subheader("Saved datasets")
    frame = data.datasets()
    if frame.empty:
        st.info("No datasets yet.")
        return
    show_table(plain_table(frame[["dataset_id", "name", "n_rows", "models", "n_runs", "source", "created_at"]]),
                 hide_index=True, placeholder="–")  # no 'None' cells, timestamps to the second
    names = dict(zip(frame["dataset_id"].astype(int), frame["name"]))
    if st.session_state.get(state.UPLOAD_MANAGE) not in names:
        st.session_state[state.UPLOAD_MANAGE] = next(iter(names))
    dataset_id = st.selectbox("Dataset", list(names), key=state.UPLOAD_MANAGE, format_func=lambda i: names[i])
    versions_section(dataset_id)
    rename_col, delete_col = st.columns(2)
    with rename_col:
        new_name = st.text_input("New name", key=state.UPLOAD_RENAME)
        if st.button("Rename", disabled=not new_name.strip()):
            _change(lambda db: db.rename_dataset(dataset_id, new_name), f"Renamed to {new_name.strip()}.")
    with delete_col:
        runs = int(frame.loc[frame["dataset_id"] == dataset_id, "n_runs"].iloc[0])
        sure = st.checkbox(f"Yes, delete it and its {runs} run(s)", key=state.UPLOAD_CONFIRM_DELETE)
        if st.button("Delete", disabled=not sure):
            _change(lambda db: db.delete_dataset(dataset_id), f"Deleted {names[dataset_id]}.")


def _change(action: Callable[[Store], None], message: str) -> None:
    try:
        action(data.store())
    except TextgenError as exc:
        st.error(plain(str(exc)))
        return
    data.refresh()
    st.toast(plain(message))
    st.session_state.pop(state.UPLOAD_CONFIRM_DELETE, None)
    st.session_state.pop(state.UPLOAD_RENAME, None)
    st.rerun()
